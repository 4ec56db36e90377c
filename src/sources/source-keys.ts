/**
 * The keys of a source's SOPS files, for its render (docs/sources.md, "Secrets"): the age keys of
 * the Secret janus-sops-age of its namespace (src/changes/age-keys.ts), read by the caller as the
 * identity it renders for: the source's ServiceAccount in `janus run`, the identity the plan runs
 * as in `janus plan --base`. Keys that cannot be had fail the render naming the Secret
 * (RenderKeyError), as any render failure; another error is no fault of the repository.
 */
import { AgeKeysError } from '../changes/age-keys.ts';
import type { Decryption } from '../render/decrypt-inputs.ts';
import { RenderKeyError } from '../render/render-error.ts';

export function sourceDecryption(readKeys: () => Promise<readonly string[]>): Decryption {
  return {
    async identities() {
      try {
        return await readKeys();
      } catch (e) {
        if (e instanceof AgeKeysError) throw new RenderKeyError(e.message);
        throw e;
      }
    },
  };
}
