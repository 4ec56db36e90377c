/** What a repository is allowed to do, and the limits that keep one directory from hurting the rest. */
import type { RepositoryPolicy } from './policy.ts';

export interface ParseLimits {
  /** Largest single file. */
  maxFileBytes: number;
  /** All files of one directory together: the resulting Transaction must fit in one etcd write (1.5 MiB). */
  maxTotalBytes: number;
  /** Entries in one directory, checked before anything is read. */
  maxEntries: number;
  maxChanges: number;
}

/**
 * Changes in one transaction directory: written by hand, so far fewer than a source's render may
 * need (the CRD allows MAX_CHANGES); the directory's tree bound follows from it (docs/git.md).
 */
export const MAX_DIRECTORY_CHANGES = 256;

export const DEFAULT_LIMITS: ParseLimits = {
  maxFileBytes: 1024 * 1024,
  maxTotalBytes: 1024 * 1024 + 256 * 1024,
  maxEntries: MAX_DIRECTORY_CHANGES + 16,
  maxChanges: MAX_DIRECTORY_CHANGES,
};

export interface ParseOptions {
  /**
   * The default namespace, and the namespaces and ServiceAccounts the repository may use
   * (src/gitops/policy.ts). A directory that uses anything else is refused.
   */
  policy: RepositoryPolicy;
  limits?: Partial<ParseLimits>;
}

/** Where a directory came from; recorded as annotations on the Transaction. */
export interface SourceInfo {
  /** Repository URL or path, without credentials. */
  repository: string;
  branch: string;
  /** The commit (40 hex) at which the directory was read. */
  commit: string;
  /** Position of the commit on the watched branch; orders contested locks. */
  sequence?: number;
}

export function resolveLimits(limits: Partial<ParseLimits> | undefined): ParseLimits {
  return { ...DEFAULT_LIMITS, ...limits };
}
