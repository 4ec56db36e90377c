/** One commit to make on the results branch. */

export interface ResultRecord {
  /**
   * Repository-relative path → full new content. Empty for a notice: a commit that changes no file
   * (e.g. "edit ignored"), recorded for `git log` only.
   */
  files: Record<string, string>;
  /** The whole commit message, trailers included. */
  message: string;
  /**
   * Unique per result, given when it is queued and written as the trailer Janus-Result, so a
   * replay after a push whose response was lost recognises what already landed on the remote.
   */
  id?: string;
}

/** Checks a value read back from disk; undefined when it is not a ResultRecord. */
export function asResultRecord(value: unknown): ResultRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { files, message, id } = value as Record<string, unknown>;
  if (typeof message !== 'string' || typeof files !== 'object' || files === null || Array.isArray(files))
    return undefined;
  if (!Object.values(files).every((content) => typeof content === 'string')) return undefined;
  return {
    files: files as Record<string, string>,
    message,
    ...(typeof id === 'string' && { id }),
  };
}
