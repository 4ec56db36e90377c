/** What `janus trace` reports: which transaction last changed an object, from which Git commit. Pure. */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { type KubeObject, splitApiVersion } from '../kube/resources.ts';
import { changeOutcome, resultPath } from '../results/index.ts';
import { ANNOTATION_APPLIED_BY } from '../saga/targets.ts';
import { printable } from '../text/printable.ts';
import { sourceApplies } from './status-view.ts';

export interface AppliedBy {
  namespace: string;
  name: string;
  uid: string;
  change: number;
}

/** `<namespace>/<name>@<uid>#<index>`, the stamp every Create, Update and Patch leaves. */
export function parseAppliedBy(value: string | undefined): AppliedBy | undefined {
  const m = /^([^/]+)\/([^@]+)@([^#]+)#(\d+)$/.exec(value ?? '');
  if (!m) return undefined;
  return { namespace: m[1] ?? '', name: m[2] ?? '', uid: m[3] ?? '', change: Number(m[4]) };
}

export interface TraceReport {
  object: string;
  /**
   * Why the object's stamp is not believed: anyone who may write the object may write its
   * annotations, so a stamp counts only when the change it names targets this very object.
   */
  untrusted?: string;
  /**
   * Why the stamp cannot be checked: the Transaction it names is gone, or has another uid (a
   * namesake created since). Anyone who may write the object could have written such a stamp, so
   * it is reported, not believed; the results branch's file is where to compare the uid.
   */
  unverified?: string;
  /** Absent when no transaction's stamp is on the object. */
  appliedBy?: AppliedBy & {
    /** The Transaction still exists with that uid (a re-created one of the same name does not count). */
    found: boolean;
    phase?: string;
    changeType?: string;
    outcome?: string;
    source?: { repository?: string; revision?: string; path?: string };
    /** The Source whose commit the transaction applied, when it was a source's. */
    sourceName?: string;
    completedAt?: string;
    /** Where the results branch keeps its outcome, also after the Transaction is gone. */
    resultFile: string;
  };
}

export function traceReport(object: KubeObject, txn: Transaction | undefined): TraceReport {
  const { namespace, name } = object.metadata;
  const described = `${object.kind} ${namespace ? `${namespace}/` : ''}${name}`;
  const stamp = parseAppliedBy(object.metadata.annotations?.[ANNOTATION_APPLIED_BY]);
  if (!stamp) return { object: described };
  const same = txn !== undefined && txn.metadata.uid === stamp.uid;
  if (same && !changeTargets(txn, stamp.change, object)) {
    const target = txn.spec.changes[stamp.change]?.target;
    return {
      object: described,
      untrusted: `its ${ANNOTATION_APPLIED_BY} annotation names change ${stamp.change} of Transaction ${stamp.namespace}/${stamp.name}, which ${target ? `targets ${target.kind} ${target.name}` : 'has no such change'}, not this object: Janus did not write that stamp here`,
    };
  }
  const unverified = same
    ? undefined
    : `Transaction ${stamp.namespace}/${stamp.name} (uid ${stamp.uid}), which ${
        txn
          ? `now has uid ${txn.metadata.uid ?? 'unknown'}: another Transaction of that name`
          : 'no longer exists'
      }; nothing confirms that Janus wrote it`;
  const status = same ? txn.status : undefined;
  const changeType = same ? txn.spec.changes[stamp.change]?.type : undefined;
  return {
    object: described,
    ...(unverified && { unverified }),
    appliedBy: {
      ...stamp,
      found: same,
      ...(status?.phase && { phase: status.phase }),
      ...(changeType && { changeType }),
      ...(same && { outcome: changeOutcome(status?.items?.[stamp.change]) }),
      ...(status?.source && { source: status.source }),
      ...(same && txn.spec.sourceRef && { sourceName: txn.spec.sourceRef.name }),
      ...(status?.completedAt && { completedAt: status.completedAt }),
      resultFile: resultPath(stamp.namespace, stamp.name),
    },
  };
}

/** Whether change `index` of `txn` targets `object`: same API group, kind, namespace and name. */
export function changeTargets(txn: Transaction, index: number, object: KubeObject): boolean {
  const target = txn.spec.changes[index]?.target;
  if (!target) return false;
  const namespace = object.metadata.namespace
    ? (target.namespace ?? txn.metadata.namespace)
    : target.namespace;
  return (
    splitApiVersion(target.apiVersion).group === splitApiVersion(object.apiVersion).group &&
    target.kind === object.kind &&
    target.name === object.metadata.name &&
    namespace === object.metadata.namespace
  );
}

/** What `janus trace` prints; printable, since the object's annotations are anyone's words. */
export function renderTrace(report: TraceReport): string {
  return printable(renderTraceText(report));
}

function renderTraceText(report: TraceReport): string {
  const a = report.appliedBy;
  if (report.untrusted) return `${report.object} is not traced: ${report.untrusted}.\n`;
  if (!a) {
    return `${report.object} carries no ${ANNOTATION_APPLIED_BY} annotation: no Janus transaction has changed it (or it was changed since by something else that replaced its annotations).\n`;
  }
  if (report.unverified) {
    return (
      `${report.object} is not traced: its ${ANNOTATION_APPLIED_BY} annotation names change ${a.change} of ` +
      `${report.unverified}. If Janus wrote it, the outcome is on the results branch: ${a.resultFile} ` +
      `(its transaction.uid must be ${a.uid}).\n`
    );
  }
  const lines = [
    `${report.object} was last written by Transaction ${a.namespace}/${a.name}, change ${a.change}${a.changeType ? ` (${a.changeType})` : ''}.`,
  ];
  const field = (label: string, value: string | undefined) => {
    if (value) lines.push(`  ${`${label}:`.padEnd(10)}${value}`);
  };
  field('phase', a.phase);
  field('change', a.outcome);
  if (a.source)
    field(
      'source',
      [a.source.repository, a.source.path, a.source.revision && `at ${a.source.revision}`]
        .filter(Boolean)
        .join(' '),
    );
  else field('source', 'created directly, not from Git');
  if (a.sourceName) field('applies', sourceApplies(a.namespace, a.sourceName, a.source?.revision, a.name));
  field('finished', a.completedAt);
  field('results', a.resultFile);
  return `${lines.join('\n')}\n`;
}
