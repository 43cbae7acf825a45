/**
 * The extras key a message carries when it arrived while a maintenance window covered its channel or
 * source: clients show it without a sound or OS notification, and it is never re-delivered.
 */
export const SILENT_EXTRA = 'service::silent';
