/**
 * What a fetched pack's trees and commits name, collected while it is indexed, for the check
 * `git fetch` makes before it moves a ref (fetch-connectivity.ts). The pack comes from a server
 * tenants push to, so what this may hold is bounded: a tree over 4 MiB is not looked into (Janus
 * reads none that large), a commit's headers only in its first 64 KiB (as Janus reads commits),
 * and the distinct objects named, in all, by a limit of their own.
 */
import { GIT_INPUT_LIMITS } from './input-limits.ts';
import { ProtocolError } from './receive-pack-protocol.ts';

export interface ObjectLinks {
  /** Each object named by a tree entry or as a commit's tree, and one object naming it. */
  named: Map<string, string>;
  /** Each commit of the pack and its parents. */
  parents: Map<string, string[]>;
}

/** Trees larger than this are not looked into: Janus reads none larger. */
const LARGEST_TREE_LOOKED_INTO = GIT_INPUT_LIMITS.maxTreeBytes;
/** A commit's headers are read from its first bytes, as Janus reads commits. */
export const COMMIT_HEADER_BYTES = GIT_INPUT_LIMITS.commitReadBytes;

const SPACE = 0x20;
const NEWLINE = 0x0a;
/** "160000": a submodule's commit, in another repository. */
const GITLINK = Buffer.from('160000');

function isGitlink(content: Buffer, at: number, space: number): boolean {
  if (space - at !== GITLINK.length) return false;
  for (let i = 0; i < GITLINK.length; i++) if (content[at + i] !== GITLINK[i]) return false;
  return true;
}

export class LinkCollector {
  readonly links: ObjectLinks = { named: new Map(), parents: new Map() };
  readonly #maxLinks: number;
  #edges = 0;

  /** `maxLinks`: distinct objects named and parent edges, in all. */
  constructor(maxLinks: number) {
    this.#maxLinks = maxLinks;
  }

  /** Adds what `content` (a tree, a commit or its start) names; returns the entries read. */
  add(type: string, oid: string, content: Buffer): number {
    const read =
      type === 'tree' ? this.#tree(oid, content) : type === 'commit' ? this.#commit(oid, content) : 0;
    if (this.links.named.size + this.#edges > this.#maxLinks)
      throw new ProtocolError(
        `the fetched pack's trees and commits name more than ${this.#maxLinks} objects; Janus checks at most that many`,
      );
    return read;
  }

  #tree(oid: string, content: Buffer): number {
    if (content.length > LARGEST_TREE_LOOKED_INTO) return 0;
    let entries = 0;
    for (let at = 0; at < content.length; entries++) {
      const space = content.indexOf(SPACE, at);
      const nul = space < 0 ? -1 : content.indexOf(0, space);
      if (nul < 0 || nul + 21 > content.length) break; // malformed: its reader says so
      if (!isGitlink(content, at, space))
        this.links.named.set(content.toString('hex', nul + 1, nul + 21), oid);
      at = nul + 21;
    }
    return entries;
  }

  /** The tree and parent headers, which come first; read up to the first other line. */
  #commit(oid: string, content: Buffer): number {
    const parents = new Set<string>();
    const end = Math.min(content.length, COMMIT_HEADER_BYTES);
    let lines = 0;
    for (let at = 0; at < end; lines++) {
      const eol = content.indexOf(NEWLINE, at);
      if (eol < 0 || eol > end) break;
      const line = content.toString('latin1', at, eol);
      if (line.startsWith('tree ')) this.links.named.set(line.slice(5), oid);
      else if (line.startsWith('parent ')) parents.add(line.slice(7));
      else break;
      at = eol + 1;
    }
    this.links.parents.set(oid, [...parents]);
    this.#edges += parents.size;
    return lines;
  }
}
