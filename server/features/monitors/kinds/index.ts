import type { AnyMonitorKind } from '../kind';
import { browserWorkflow } from './browser-workflow';
import { contentMonitor } from './content';
import { httpMonitor } from './http';
import { portMonitor } from './port';
import { simpleMonitor } from './simple';
import { workflowMonitor } from './workflow';

/**
 * The built-in monitor kinds, registered by the monitors feature at init. A kind is one module
 * (../kind.ts); adding one is an import and an entry here, nothing in the engine.
 */
export const BUILT_IN_KINDS: AnyMonitorKind[] = [
  simpleMonitor,
  httpMonitor,
  portMonitor,
  workflowMonitor,
  contentMonitor,
  browserWorkflow,
];
