export type { DescribeOptions, ErrorDescription } from './describe-error.ts';
export { describeError, EXPECTED_ERROR, errorText, isExpectedError } from './describe-error.ts';
export type { LogDestination, Logger, LoggerOptions, LogLevel } from './logger.ts';
export { createLogger, isLogLevel, LOG_LEVELS, silentLogger } from './logger.ts';
export { isSecretKey, REDACTED, redactSecrets } from './redact.ts';
