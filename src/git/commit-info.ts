/** A commit as Janus reads it: its tree, parents, message, author and committer. */
export interface Signature {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  timestamp: number;
  timezoneOffset: number;
}

export interface CommitInfo {
  oid: string;
  tree: string;
  parents: string[];
  message: string;
  author: Signature;
  committer: Signature;
}
