/**
 * A repository of sources for the render tests: files (and symbolic links) committed with the real
 * git, and each render's checkout written from that commit through Janus's own object store, as
 * `janus run` will.
 */
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { type Checkout, checkoutCommit } from '../../../src/render/checkout.ts';
import type { Renderer } from '../../../src/render/renderer.ts';
import type { HelmRender, RenderRequest, RenderResult } from '../../../src/render/types.ts';
import { git } from './git-server.ts';

/** A file's text, or a symbolic link to `symlink`. */
export type RepoFile = string | { symlink: string };

export interface SourceRepo {
  readonly dir: string;
  readonly gitdir: string;
  /** Commits exactly `files` (what the previous commit had is removed); returns the commit. */
  commit(files: Readonly<Record<string, RepoFile>>): Promise<string>;
  /** Writes the checkout of `commit` through Janus's object store. */
  checkout(commit: string): Promise<Checkout>;
}

export async function sourceRepository(): Promise<SourceRepo> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-sources-'));
  await git(dir, 'init', '--quiet', '--initial-branch=main');
  const gitdir = join(dir, '.git');
  return {
    dir,
    gitdir,
    async commit(files) {
      await git(dir, 'rm', '-r', '-q', '--ignore-unmatch', '.');
      for (const [path, content] of Object.entries(files)) {
        const file = join(dir, path);
        await mkdir(dirname(file), { recursive: true });
        if (typeof content === 'string') await writeFile(file, content);
        else await symlink(content.symlink, file);
      }
      await git(dir, 'add', '--all');
      await git(dir, '-c', 'commit.gpgsign=false', 'commit', '--quiet', '--allow-empty', '-m', 'sources');
      return (await git(dir, 'rev-parse', 'HEAD')).trim();
    },
    async checkout(commit) {
      const store = new ObjectStore(gitdir);
      try {
        return await checkoutCommit(store, commit);
      } finally {
        await store.close();
      }
    },
  };
}

/** Renders `request` at `commit` of `repo` with `renderer`, as source `source`. */
export function renderAt(
  renderer: Renderer,
  repo: SourceRepo,
  commit: string,
  request: RenderRequest,
  source = 'test/source',
): Promise<RenderResult> {
  return renderer.render({ source, request, checkout: () => repo.checkout(commit) });
}

/** A ConfigMap named cm: the smallest object a render can make. */
export const CONFIG_MAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n';

/** The request of a Helm source at `path` (release r, namespace shop), Helm's defaults but `helm`. */
export function helmRequest(path: string, helm: Partial<Omit<HelmRender, 'kind'>> = {}): RenderRequest {
  return {
    path,
    method: {
      kind: 'helm',
      releaseName: 'r',
      valuesFiles: [],
      values: {},
      includeCRDs: true,
      hooks: 'Ignore',
      apiVersions: [],
      ...helm,
    },
    namespace: 'shop',
  };
}
