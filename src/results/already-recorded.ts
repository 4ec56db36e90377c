/**
 * Whether a result file adds an outcome to the one the results branch holds at its path: the
 * rule that makes each outcome one record, whoever writes it and whenever its writer died.
 *
 * Two writers can both hold a record of the same outcome: a leader that died with its push in
 * flight (it lands after the next leader read the branch) or with records still in its spool
 * (pushed when it leads again), and the next leader, which recorded what it found. Their files
 * differ in bytes (who recorded it, with which version, from which moment of the Transaction),
 * so the writer compares outcomes: the same Transaction (uid) at the same outcome is already
 * recorded; so is one at an earlier point of its life than what the branch records, since
 * replaying it would move the file backwards (and the reporter would then record the later
 * outcome a second time). Pure: commit-records.ts applies it to the tip being built on.
 */
import { outcomeFingerprint, parseResultFile, type ResultDocument } from './results-reader.ts';

/**
 * Where each recorded phase stands in a Transaction's life (src/saga/status.ts TRANSITIONS):
 * a record of a lower rank never follows one of a higher rank for the same uid. RollingBack and
 * Failed share a rank: a failed rollback can be retried (Failed → RollingBack → Failed), so
 * neither tells the other is stale. The in-flight phases appear only when a Transaction is
 * adopted while it runs (reporter.ts renderMaterialized).
 */
const PHASE_RANK: Readonly<Record<string, number>> = {
  Pending: 0,
  Preparing: 1,
  Prepared: 1,
  Committing: 1,
  Verifying: 1,
  Committed: 2,
  RollingBack: 3,
  Failed: 3,
  RolledBack: 4,
};

/**
 * True when `incoming` adds nothing to `recorded`, the file at the same path on the branch:
 * - the same Transaction (uid) at the same outcome (outcomeFingerprint; any two Pending records
 *   of one uid are its one materialization), or at an earlier phase than recorded;
 * - a record naming no Transaction uid (a rejected directory) where the branch records a
 *   Transaction: the directory was materialized since, so the rejection is stale;
 * - a record naming no uid that repeats the recorded one: same phase, outcome and source commit.
 */
export function alreadyRecorded(recorded: ResultDocument | undefined, incoming: ResultDocument): boolean {
  if (recorded === undefined) return false;
  const uid = incoming.transaction?.uid;
  const recordedUid = recorded.transaction?.uid;
  if (uid === undefined) {
    if (recordedUid !== undefined) return true;
    return (
      recorded.phase === incoming.phase &&
      recorded.source?.revision === incoming.source?.revision &&
      outcomeFingerprint(recorded) === outcomeFingerprint(incoming)
    );
  }
  if (recordedUid !== uid) return false;
  if (recorded.phase === incoming.phase) {
    return incoming.phase === 'Pending' || outcomeFingerprint(recorded) === outcomeFingerprint(incoming);
  }
  const before = PHASE_RANK[incoming.phase];
  const after = PHASE_RANK[recorded.phase];
  return before !== undefined && after !== undefined && before < after;
}

/**
 * alreadyRecorded on the files' texts. Most records are a later outcome of the Transaction the
 * branch records (Pending, then Committed) or of another one, which the `phase:` and `uid:` lines
 * of Janus's rendering tell without parsing either file (parsing both took ~1 ms per record,
 * more than the rest of committing it). Those lines only ever conclude that a record adds
 * something: a file a YAML parser would read otherwise (someone else wrote it) can only make
 * the writer commit the record, as it did before this check. Anything else is parsed.
 */
export function alreadyRecordedText(recorded: string, incoming: string): boolean {
  if (plainlyAdds(headline(recorded), headline(incoming))) return false;
  const doc = parseResultFile(incoming);
  return doc !== undefined && alreadyRecorded(parseResultFile(recorded), doc);
}

interface Headline {
  phase: string;
  uid: string;
}

const PHASE_LINE = /^phase: ([A-Za-z]+)$/m;
/** transaction.uid as render-transaction.ts writes it: the only key of that name two spaces in. */
const UID_LINE = /^ {2}uid: ([0-9a-z-]+)$/m;

function headline(text: string): Headline | undefined {
  const phase = PHASE_LINE.exec(text)?.[1];
  const uid = UID_LINE.exec(text)?.[1];
  return phase === undefined || uid === undefined ? undefined : { phase, uid };
}

function plainlyAdds(recorded: Headline | undefined, incoming: Headline | undefined): boolean {
  if (!recorded || !incoming) return false;
  if (recorded.uid !== incoming.uid) return true;
  const before = PHASE_RANK[recorded.phase];
  const after = PHASE_RANK[incoming.phase];
  return before !== undefined && after !== undefined && after > before;
}
