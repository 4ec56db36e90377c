export type { LogDestination, Logger, LoggerOptions, LogLevel } from './logger.ts';
export { createLogger, isLogLevel, LOG_LEVELS, silentLogger } from './logger.ts';
export { isSecretKey, REDACTED, redactSecrets } from './redact.ts';
export type { SerializedError } from './serialize-error.ts';
export { serializeError } from './serialize-error.ts';
