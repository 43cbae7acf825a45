import type { SendInput } from '../features/messages/service';
import { alertmanagerReceiver } from './alertmanager';
import { zabbixReceiver } from './zabbix';

/**
 * Inbound alert formats (conventions habit 10: kinds behind one interface and one registry). Each
 * receiver turns a request body into messages for the key's channel; the route, auth, quota and
 * storage are shared.
 */
export type ReceivedMessage = SendInput & { senderName: string };

export interface AlertReceiver {
  /** The path segment: POST /integrations/{name}. */
  name: string;
  /** Throws a 400 (errors.badRequest) for a body it cannot read. */
  toMessages(body: unknown): ReceivedMessage[];
}

export const ALERT_RECEIVERS: readonly AlertReceiver[] = [alertmanagerReceiver, zabbixReceiver];
