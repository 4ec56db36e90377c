import { Errors } from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { toGitAccessError } from '../../../src/git/errors.ts';
import { createLogger, type Logger, silentLogger } from '../../../src/log/index.ts';

/** A logger writing into memory, and the JSON lines it wrote. */
function memoryLogger(level: 'info' | 'debug' = 'info'): { logger: Logger; lines: () => string[] } {
  const written: string[] = [];
  const logger = createLogger({
    level,
    name: 'janus',
    version: '1.2.3',
    destination: { write: (line: string) => void written.push(line) },
  });
  return { logger, lines: () => written.join('').split('\n').filter(Boolean) };
}

function lastRecord(lines: () => string[]): Record<string, unknown> {
  const all = lines();
  return JSON.parse(all[all.length - 1] ?? 'null') as Record<string, unknown>;
}

describe('createLogger', () => {
  it('writes one JSON object per line with level label, ISO time, name and version', () => {
    const { logger, lines } = memoryLogger();

    logger.info({ phase: 'Committed' }, 'transaction done');
    logger.debug('not at info level');

    expect(lines()).toHaveLength(1);
    const record = lastRecord(lines);
    expect(record).toMatchObject({
      level: 'info',
      name: 'janus',
      version: '1.2.3',
      phase: 'Committed',
      msg: 'transaction done',
    });
    expect(record.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(record).not.toHaveProperty('pid');
  });

  it('redacts secret-named keys at any depth and in any case', () => {
    const { logger, lines } = memoryLogger();

    logger.info(
      {
        token: 'tok-0',
        request: {
          headers: {
            Authorization: 'Bearer tok-1',
            'X-Gitlab-Token': 'tok-2',
            'Impersonate-User': 'system:serviceaccount:default:deploy-sa',
          },
        },
        git: { auth: { username: 'janus', password: 'pw-3' } },
        config: { webhookSecret: 'sec-4', JANUS_GIT_TOKEN: 'tok-5', gitTokenFile: '/var/run/janus/token' },
        remotes: [{ url: 'https://git.example', accessToken: 'tok-6' }],
      },
      'request',
    );

    const line = lines()[0] ?? '';
    for (const secret of ['tok-0', 'tok-1', 'tok-2', 'pw-3', 'sec-4', 'tok-5', 'tok-6']) {
      expect(line).not.toContain(secret);
    }
    const record = JSON.parse(line);
    expect(record.request.headers.Authorization).toBe('[REDACTED]');
    expect(record.request.headers['Impersonate-User']).toBe('system:serviceaccount:default:deploy-sa');
    expect(record.git.auth.username).toBe('janus');
    expect(record.config.gitTokenFile).toBe('/var/run/janus/token');
    expect(record.remotes[0].url).toBe('https://git.example');
  });

  it('does not modify the object that was logged', () => {
    const { logger } = memoryLogger();
    const fields = { auth: { password: 'pw' } };

    logger.info(fields, 'x');

    expect(fields.auth.password).toBe('pw');
  });

  it('redacts the data of a Kubernetes Secret, including the last-applied annotation', () => {
    const { logger, lines } = memoryLogger();

    logger.info({
      prior: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'db',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"pw":"c2VjcmV0"}}' },
        },
        data: { pw: 'c2VjcmV0' },
        stringData: { pw: 'secret' },
      },
    });

    const line = lines()[0] ?? '';
    expect(line).not.toContain('c2VjcmV0');
    expect(line).not.toContain('"secret"');
    expect(JSON.parse(line).prior.metadata.name).toBe('db');
  });

  it('redacts secrets in child bindings and setBindings, at every generation', () => {
    const { logger, lines } = memoryLogger();

    const child = logger.child({ component: 'git', token: 'tok-child' });
    child.child({ nested: { password: 'pw-grandchild' } }).info('grandchild');
    child.setBindings({ secret: 'sec-set' });
    child.info('child');

    const output = lines().join('\n');
    expect(output).not.toContain('tok-child');
    expect(output).not.toContain('pw-grandchild');
    expect(output).not.toContain('sec-set');
    expect(lastRecord(lines)).toMatchObject({ component: 'git', token: '[REDACTED]' });
  });

  it('serializes err and error fields without HTTP response bodies', () => {
    const { logger, lines } = memoryLogger();
    const err = Object.assign(new Error('HTTP-Code: 409\nBody: {"data":"leak"}'), {
      code: 409,
      body: { kind: 'Status', message: 'the object has been modified', reason: 'Conflict', data: 'leak' },
      headers: { 'set-cookie': 'leak' },
    });

    logger.error({ err }, 'update failed');
    logger.error({ error: err }, 'update failed');

    for (const line of lines()) expect(line).not.toContain('leak');
    expect(lastRecord(lines).error).toMatchObject({ status: 409, reason: 'Conflict' });
  });

  it('logs an expected failure as its message alone, and a programming error with its stack', () => {
    const { logger, lines } = memoryLogger();
    const refused = toGitAccessError(new Errors.HttpError(401, 'Unauthorized', 'denied'), {
      repository: 'https://git.example/acme/changes.git',
      ref: 'janus/results',
      operation: 'push',
    });

    logger.warn({ err: refused, pending: 1 }, 'results push failed; will retry');
    const expected = lastRecord(lines);
    logger.error({ err: new TypeError('x is not a function') }, 'work queue task failed');
    const unexpected = lastRecord(lines);

    expect(expected.err).toEqual({
      name: 'GitAccessError',
      message:
        'push https://git.example/acme/changes.git (janus/results): the server refused the credentials (HTTP 401); check the configured token or password',
      expected: true,
      kind: 'auth',
      cause: {
        name: 'HttpError',
        message: 'HTTP Error: 401 Unauthorized',
        expected: true,
        code: 'HttpError',
        status: 401,
        reason: 'Unauthorized',
      },
    });
    expect(unexpected.err).toMatchObject({ name: 'TypeError', expected: false });
    expect((unexpected.err as { stack?: string }).stack).toMatch(/^TypeError: x is not a function\n\s+at /);
  });
});

describe('silentLogger', () => {
  it('accepts every call and writes nothing', () => {
    const logger = silentLogger();

    expect(logger.isLevelEnabled('fatal')).toBe(false);
    expect(() => logger.child({ a: 1 }).error(new Error('x'), 'y')).not.toThrow();
  });
});
