/**
 * A URL as it may be shown in a message or a log: with its password (if any) replaced by `***`. Used for database
 * URLs given on the command line (`--durable postgres://user:secret@host/db`).
 *
 * @internal
 */
export const withoutPassword = (url: string): string =>
  url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, "$1:***@")
