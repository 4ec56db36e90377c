/**
 * A push over smart HTTP with a pack built from objects already in memory (the results writer's
 * ObjectBatch), instead of isomorphic-git's push, which walks the new commits and reads every
 * object back from the loose files (inflate, SHA-1, one thread-pool job each) to deflate it
 * again. Two requests, as git itself makes them: GET info/refs?service=git-receive-pack (the
 * branch's tip), then POST git-receive-pack (the update command and the pack), answered by the
 * server's report-status. The update names the tip it replaces; git-receive-pack moves the ref
 * only if it still points there, so nothing another writer pushed is ever overwritten.
 */
import type { HttpClient } from 'isomorphic-git';
import { GitAccessError } from './errors.ts';
import { type PackObject, writePack } from './pack-writer.ts';
import {
  ProtocolError,
  parseAdvertisement,
  parseReportStatus,
  requestCapabilities,
  updateCommand,
} from './receive-pack-protocol.ts';
import { expectMediaType, readBody } from './smart-http.ts';

export interface PackPush {
  http: HttpClient;
  /** The repository URL, as configured (no credentials in it: location.ts refuses them). */
  url: string;
  /** Authorization, as the transport gives it; sent to `url` only. */
  headers: Record<string, string>;
  branch: string;
  /** The tip the new commits were built on; undefined: the branch must not exist yet. */
  expected: string | undefined;
  oid: string;
  /** Every object reachable from `oid` that is not reachable from `expected`. */
  objects: readonly PackObject[];
}

/**
 * The advertisement lists every ref of the repository: 16 MiB is ~200,000 of them. The report of
 * a one-ref push is a few lines; 1 MiB leaves room for a long reason.
 */
const MAX_ADVERTISEMENT_BYTES = 16 * 1024 * 1024;
const MAX_REPORT_BYTES = 1024 * 1024;

/**
 * Moves `branch` from `expected` to `oid`. Fails with a GitAccessError of kind 'rejected' when
 * the branch is elsewhere (before the request, or when the server updates it) and with
 * isomorphic-git's HttpError / SmartHttpError for what toGitAccessError maps already.
 */
export async function pushPack(push: PackPush): Promise<void> {
  const ref = `refs/heads/${push.branch}`;
  const reject = (detail: string) =>
    new GitAccessError('rejected', `push ${push.url} (${push.branch}): ${detail}`, {
      repository: push.url,
      ref: push.branch,
    });
  const discovery = await push.http.request({
    method: 'GET',
    url: `${push.url}/info/refs?service=git-receive-pack`,
    headers: { ...push.headers },
  });
  const advertisementBody = await readBody(discovery, MAX_ADVERTISEMENT_BYTES);
  expectMediaType(discovery, 'application/x-git-receive-pack-advertisement', advertisementBody);
  const advertised = parseAdvertisement(advertisementBody);
  const current = advertised.refs.get(ref);
  if (current === push.oid) return; // already there (pushed by an earlier attempt)
  if (current !== push.expected)
    throw reject(`the branch moved to ${current ?? 'nothing'} (expected ${push.expected ?? 'nothing'})`);
  if (!advertised.capabilities.has('report-status'))
    throw new ProtocolError('the server does not offer report-status: a push could not be confirmed');
  const format = [...advertised.capabilities].find((c) => c.startsWith('object-format='));
  if (format !== undefined && format !== 'object-format=sha1')
    throw new ProtocolError(`the repository uses ${format}; Janus writes SHA-1 objects only`);

  const body = [
    updateCommand(ref, push.expected, push.oid, requestCapabilities(advertised.capabilities)),
    ...writePack(push.objects),
  ];
  const reply = await push.http.request({
    method: 'POST',
    url: `${push.url}/git-receive-pack`,
    headers: {
      ...push.headers,
      'content-type': 'application/x-git-receive-pack-request',
      accept: 'application/x-git-receive-pack-result',
    },
    body: iterate(body),
  });
  const report = parseReportStatus(await readBody(reply, MAX_REPORT_BYTES));
  if (report.unpack !== 'ok')
    throw new ProtocolError(`the server could not unpack the push: ${report.unpack}`);
  if (!report.refs.has(ref)) throw new ProtocolError(`the server's report does not mention ${ref}`);
  const refused = report.refs.get(ref);
  // non-fast-forward, fetch first, stale info, failed to lock, a hook's refusal: fetch and replay.
  if (refused !== undefined) throw reject(`the server refused the update: ${refused}`);
}

async function* iterate(chunks: readonly Uint8Array[]): AsyncIterableIterator<Uint8Array> {
  yield* chunks;
}
