/**
 * What a tool wrote, read as objects (pure): multi-document YAML read with the project's bounded
 * parser (src/yaml/), empty documents dropped, a `v1` `List` unpacked into its items, and every
 * object checked for apiVersion, kind and metadata.name, else the failure names the document.
 */
import type { KubeObject } from '../kube/resources.ts';
import { formatDiagnostic } from '../yaml/diagnostic.ts';
import { parseYamlFile } from '../yaml/yaml-file.ts';
import { isRecord } from './references.ts';

export type ParsedObjects =
  | { ok: true; objects: KubeObject[] }
  | { ok: false; message: string; line?: number | undefined };

/** The objects of `text`; `what` names it in messages (e.g. "kustomize's output", a file). */
export function parseObjects(what: string, text: string): ParsedObjects {
  const parsed = parseYamlFile(what, text);
  const diagnostic = parsed.diagnostics[0];
  if (diagnostic) return { ok: false, message: formatDiagnostic(diagnostic), line: diagnostic.line };
  const objects: KubeObject[] = [];
  for (const doc of parsed.documents) {
    const items =
      isRecord(doc.value) &&
      doc.value.apiVersion === 'v1' &&
      doc.value.kind === 'List' &&
      Array.isArray(doc.value.items)
        ? doc.value.items
        : [doc.value];
    for (const item of items) {
      if (item === null || item === undefined) continue;
      const problem = objectProblem(item);
      if (problem) {
        return {
          ok: false,
          message: `${what}, document ${doc.index}: ${problem}`,
          line: doc.locate([])?.line,
        };
      }
      objects.push(item as KubeObject);
    }
  }
  return { ok: true, objects };
}

function objectProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not an object (a mapping)';
  const kind = typeof value.kind === 'string' && value.kind !== '' ? value.kind : undefined;
  const named = kind ? `a ${kind}` : 'an object';
  if (typeof value.apiVersion !== 'string' || value.apiVersion === '') return `${named} without apiVersion`;
  if (!kind) return 'an object without kind';
  const metadata = value.metadata;
  if (!isRecord(metadata) || typeof metadata.name !== 'string' || metadata.name === '')
    return `${named} without metadata.name`;
  return undefined;
}
