import type { Feature } from '../index';
import { verifiedHostRoutes } from './routes';

/** Verified hosts (issue 13, §3.1): proofs of control over a host, asked before a port scan of it. */
export const verifiedHostsFeature: Feature = { name: 'verified-hosts', routes: verifiedHostRoutes };
