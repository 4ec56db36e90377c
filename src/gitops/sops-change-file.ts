/**
 * A SOPS-encrypted change file (`<order>-<name>.<create|update>.sops.yaml`, or any change file
 * with sops metadata): checked without its key, the target read from the fields sops left in
 * clear, and the change made to carry the encrypted text as it is (change.sopsContent). Nothing
 * here decrypts: the controller does, when it applies the change (src/changes/sops-content.ts).
 */
import type { ChangeType } from '../api/v1alpha1/index.ts';
import { sopsKindRefusal } from '../changes/sops-kinds.ts';
import { SopsError } from '../sops/sops-error.ts';
import { checkSopsStructure } from '../sops/structure.ts';
import type { Diagnostic } from '../yaml/diagnostic.ts';
import type { ParsedYaml } from '../yaml/yaml-file.ts';
import { checkContent } from './change-fields.ts';
import { FieldReporter, isFields } from './fields.ts';
import type { LoadedFile } from './load-directory.ts';
import type { LocatedChange } from './located-change.ts';
import { checkTarget, MANIFEST_TARGET_PATHS } from './target.ts';

export function parseSopsChangeFile(
  file: LoadedFile,
  type: ChangeType,
  parsed: ParsedYaml,
  sopsKinds: readonly string[],
  out: Diagnostic[],
): LocatedChange[] {
  const problem = (message: string): LocatedChange[] => {
    out.push({ code: 'invalid-sops', file: file.path, message });
    return [];
  };
  if (parsed.diagnostics.length > 0) return [];
  if (type !== 'Create' && type !== 'Update') {
    return problem(
      `a SOPS-encrypted change file is a Create or an Update (the whole object), not a ${type}: rename it to ….update.sops.yaml or ….create.sops.yaml`,
    );
  }
  const document = parsed.documents[0];
  if (parsed.documents.length !== 1 || !document) {
    return problem(
      `holds ${parsed.documents.length} YAML documents: a SOPS-encrypted change file holds exactly one`,
    );
  }
  const r = new FieldReporter(file.path, document, false, out);
  try {
    checkSopsStructure(file.path, file.text);
  } catch (e) {
    if (!(e instanceof SopsError)) throw e;
    if (!e.field) return problem(e.reason);
    r.report('invalid-sops', e.field, e.reason);
    return [];
  }
  const manifest = r.mapping(document.value, []);
  if (!manifest) return [];
  const { sops: _metadata, ...rest } = manifest;
  const metadata = isFields(rest.metadata) ? rest.metadata : undefined;
  const target = checkTarget(r, { top: rest, meta: metadata }, MANIFEST_TARGET_PATHS);
  if (!target) return [];
  // Decrypted, the content is in clear for whoever reads the target: a Secret, or a kind the
  // platform team allowed knowing who reads it (the controller also asks the live view role).
  const kindRefusal = sopsKindRefusal(target.apiVersion, target.kind, sopsKinds);
  if (kindRefusal) {
    r.report('invalid-sops', ['kind'], kindRefusal);
    return [];
  }
  // The identity was read in clear; what the manifest holds beyond it stays encrypted until applied.
  if (!checkContent(r, type, target, rest, []).ok) return [];
  return [
    {
      change: { target, type, sopsContent: file.text },
      origin: file.path,
      report: (code, message, field = 'name') => r.report(code, ['metadata', field], message),
    },
  ];
}
