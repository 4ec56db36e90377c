/**
 * Change files: `<order>-<name>.<type>.yaml`, each YAML document one change of that type whose
 * manifest names the target. For Delete the manifest only identifies the target. A file named
 * `….sops.yaml` or carrying sops metadata is SOPS-encrypted (sops-change-file.ts).
 */
import type { ChangeType } from '../api/v1alpha1/index.ts';
import { hasSopsMetadata } from '../sops/structure.ts';
import type { Diagnostic } from '../yaml/diagnostic.ts';
import { type ParsedYaml, parseYamlFile } from '../yaml/yaml-file.ts';
import { checkContent } from './change-fields.ts';
import { FieldReporter } from './fields.ts';
import type { LoadedFile } from './load-directory.ts';
import type { LocatedChange } from './located-change.ts';
import { parseSopsChangeFile } from './sops-change-file.ts';
import { checkTarget, MANIFEST_TARGET_PATHS } from './target.ts';

/** `sopsKinds`: the kinds besides Secret a SOPS-encrypted file may target (the repository's policy). */
export function parseChangeFile(
  file: LoadedFile,
  type: ChangeType,
  sopsKinds: readonly string[],
  out: Diagnostic[],
): LocatedChange[] {
  const parsed = parseYamlFile(file.path, file.text);
  out.push(...parsed.diagnostics);
  if (parsed.documents.length === 0 && parsed.diagnostics.length === 0) {
    out.push({
      code: 'no-changes',
      file: file.path,
      message: 'the file holds no YAML document, so no change',
    });
  }
  if (isSopsFile(file, parsed)) {
    return parseSopsChangeFile(file, type, parsed, sopsKinds, out);
  }
  const changes: LocatedChange[] = [];
  for (const document of parsed.documents) {
    const r = new FieldReporter(file.path, document, parsed.multiDocument, out);
    const manifest = r.mapping(document.value, []);
    if (!manifest) continue;
    if (isList(manifest)) {
      r.report(
        'invalid-value',
        ['kind'],
        'lists are not supported: put each object in its own YAML document (---)',
      );
      continue;
    }
    const metadata = manifest.metadata === undefined ? undefined : r.mapping(manifest.metadata, ['metadata']);
    if (manifest.metadata !== undefined && !metadata) continue;
    if (metadata && metadata.name === undefined && metadata.generateName !== undefined) {
      r.report('missing-field', ['metadata', 'name'], 'is required: generateName is not supported', 'parent');
      continue;
    }
    const target = checkTarget(r, { top: manifest, meta: metadata }, MANIFEST_TARGET_PATHS);
    if (!target) continue;
    // The manifest is the content; for Delete it is only the target's identity and is not sent.
    const content = checkContent(r, type, target, type === 'Delete' ? undefined : manifest, []);
    if (!content.ok) continue;
    const where = parsed.multiDocument ? `${file.path} document ${document.index}` : file.path;
    changes.push({
      change: { target, type, ...(content.content && { content: content.content }) },
      origin: where,
      report: (code, message, field = 'name') => r.report(code, ['metadata', field], message),
    });
  }
  return changes;
}

/** Named `….sops.yaml`, or carrying sops metadata whatever its name: never read as a plain manifest. */
function isSopsFile(file: LoadedFile, parsed: ParsedYaml): boolean {
  return (
    (file.role.role === 'change' && file.role.sops) || parsed.documents.some((d) => hasSopsMetadata(d.value))
  );
}

function isList(manifest: Record<string, unknown>): boolean {
  const kind = manifest.kind;
  return (
    kind === 'List' || (typeof kind === 'string' && kind.endsWith('List') && Array.isArray(manifest.items))
  );
}
