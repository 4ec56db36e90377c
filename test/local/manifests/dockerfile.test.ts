/**
 * The container image without a Docker engine: rebuilds the runtime stage's file set from the
 * Dockerfile (its COPY lines; for node_modules exactly the packages `npm ci --omit=dev` installs,
 * per package-lock.json; for dist/ what `npm run build` compiles), then checks that every module
 * reachable from the entry point resolves there and that the commands run from that copy.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  link,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { builtinModules, createRequire, stripTypeScriptTypes } from 'node:module';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROLLER_NODE_FLAGS, RUN_ENVIRONMENT, RUN_NODE_FLAGS } from '../../../src/cli/node-flags.ts';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import {
  copies,
  execForm,
  inContext,
  lastValue,
  parseDockerfile,
  type Stage,
} from '../../support/dockerfile.ts';
import { eventually } from '../../support/eventually.ts';
import { buildDist, SHIPPED_MAIN } from '../../support/processes/build.ts';
import { renderToolsDir } from '../../support/servers/render-tools.ts';

let image = '';
let app = '';
let runtime: Stage;
let build: Stage;
let compile: Stage;
let renderTools: Stage;
let dockerArgs: Record<string, string>;

/** Copies a tree with hard links (same file system as the repository: fast, no extra space). */
async function linkTree(
  from: string,
  to: string,
  skip: (name: string) => boolean = () => false,
): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (skip(entry.name)) continue;
    const [source, target] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) await linkTree(source, target);
    else if (entry.isSymbolicLink()) await symlink(await readlink(source), target);
    else await link(source, target);
  }
}

/** The packages `npm ci --omit=dev` installs: every lockfile entry not marked dev. */
async function productionPackages(): Promise<string[]> {
  const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([path, p]) => path.startsWith('node_modules/') && !p.dev && !p.devOptional)
    .map(([path]) => path);
}

beforeAll(async () => {
  const dockerfile = parseDockerfile(await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
  const named = dockerfile.stages.find((s) => s.name === 'build');
  const compiling = dockerfile.stages.find((s) => s.name === 'compile');
  const tools = dockerfile.stages.find((s) => s.name === 'render-tools');
  const last = dockerfile.stages.at(-1);
  if (!named || !compiling || !tools || !last)
    throw new Error('the Dockerfile needs build, compile and render-tools stages and a runtime stage');
  [build, compile, renderTools, runtime] = [named, compiling, tools, last];
  dockerArgs = dockerfile.args;
  const dockerignore = await readFile(join(REPO_ROOT, '.dockerignore'), 'utf8');
  image = await mkdtemp(join(tmpdir(), 'janus-image-'));
  app = join(image, lastValue(runtime, 'WORKDIR') ?? '/');
  for (const copy of copies(runtime)) {
    if (copy.from === 'build') {
      // What the build stage installed: the production packages, each without nested modules
      // (nested production packages are lockfile entries of their own).
      expect(copy.sources).toEqual(['/app/node_modules']);
      for (const pkg of await productionPackages()) {
        await linkTree(
          join(REPO_ROOT, pkg),
          join(resolve(app, copy.destination), relative('node_modules', pkg)),
          (n) => n === 'node_modules',
        );
      }
      continue;
    }
    if (copy.from === 'render-tools') {
      // What the render-tools stage built: the binaries build-render-tools.sh makes, which the
      // tests build with the same script, onto the image's PATH.
      expect(copy.sources).toEqual(['/out/kustomize', '/out/helm']);
      expect(copy.destination).toBe('/usr/local/bin/');
      const bin = join(image, copy.destination);
      await mkdir(bin, { recursive: true });
      for (const source of copy.sources)
        await symlink(join(renderToolsDir(), basename(source)), join(bin, basename(source)));
      continue;
    }
    if (copy.from === 'compile') {
      // What the compile stage built: src/ compiled by tsconfig.build.json (npm run build).
      expect(copy.sources).toEqual(['/app/dist']);
      buildDist(resolve(app, copy.destination));
      continue;
    }
    for (const source of copy.sources) {
      expect(inContext(dockerignore, source), `${source} is excluded by .dockerignore`).toBe(true);
      await copyFromContext(source, copy.destination);
    }
  }
});

/** Docker's COPY: a file into a directory destination (ending in /) keeps its name; a directory's contents go to the destination. */
async function copyFromContext(source: string, destination: string): Promise<void> {
  const from = join(REPO_ROOT, source);
  if ((await stat(from)).isDirectory()) return linkTree(from, resolve(app, destination));
  const to = destination.endsWith('/')
    ? join(resolve(app, destination), basename(source))
    : resolve(app, destination);
  await mkdir(dirname(to), { recursive: true });
  await link(from, to);
}

afterAll(async () => {
  if (image) await rm(image, { recursive: true, force: true });
});

/** Every import specifier of a TypeScript source, static and dynamic (string literals only). */
function specifiersOf(source: string): string[] {
  const code = stripTypeScriptTypes(source);
  const found = new Set<string>();
  for (const m of code.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?\sfrom\s*['"]([^'"]+)['"]/gm))
    found.add(m[1] as string);
  for (const m of code.matchAll(/(?:^|[\s;])import\s*['"]([^'"]+)['"]/gm)) found.add(m[1] as string);
  for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.add(m[1] as string);
  return [...found];
}

const packageName = (specifier: string) =>
  specifier.startsWith('@')
    ? specifier.split('/').slice(0, 2).join('/')
    : (specifier.split('/')[0] as string);

function janus(args: string[]) {
  return spawnSync(process.execPath, [SHIPPED_MAIN, ...args], {
    cwd: app,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
}

describe('the container image', () => {
  it('installs production dependencies only, from the lockfile, in a build stage', () => {
    const run = build.instructions
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.args)
      .join('\n');
    expect(run).toMatch(/npm ci --omit=dev/);
    expect(existsSync(join(app, 'node_modules/yaml'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/vitest'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/typescript'))).toBe(false);
    expect(existsSync(join(app, 'test'))).toBe(false);
  });

  it('compiles src/ to JavaScript in a stage of its own, and ships the JavaScript only', async () => {
    const run = compile.instructions
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.args)
      .join('\n');
    expect(run).toMatch(/npm ci\b/);
    expect(run).toMatch(/npm run build/);
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json');
    expect(existsSync(join(app, SHIPPED_MAIN))).toBe(true);
    expect(existsSync(join(app, 'src'))).toBe(false);
    expect(existsSync(join(app, 'dist/cli/main.ts'))).toBe(false);
  });

  it('runs as a numeric non-root user, from a pinned Node 24 base, janus run by default', () => {
    expect(lastValue(runtime, 'USER')).toMatch(/^[1-9]\d*(:\d+)?$/);
    expect(execForm(runtime, 'ENTRYPOINT')).toEqual(['node', SHIPPED_MAIN]);
    expect(execForm(runtime, 'CMD')).toEqual(['run']);
  });

  it('pins the base image to an exact Node 24 version (or a digest), and Go to an exact 1.26', async () => {
    const dockerfile = parseDockerfile(await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
    for (const stage of dockerfile.stages) {
      const base = stage.base.replace(/^\$\{(\w+)\}$/, (_, arg: string) => dockerfile.args[arg] ?? '');
      if (stage === renderTools || stage.name === 'render-tools')
        expect(base).toMatch(/^golang:1\.26\.\d+-[a-z]+(@sha256:[0-9a-f]{64})?$|@sha256:[0-9a-f]{64}$/);
      else
        expect(base).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$|@sha256:[0-9a-f]{64}$/);
    }
  });

  it('builds kustomize and helm in a stage of its own, from the pinned modules the tests build, and ships them on the PATH', async () => {
    const kubeTestenv = 'test/kube-testenv';
    const sources = copies(renderTools).flatMap((c) => c.sources);
    expect(sources.sort()).toEqual(
      [
        `${kubeTestenv}/build-render-tools.sh`,
        `${kubeTestenv}/lib.sh`,
        ...['helm', 'kustomize'].flatMap((m) =>
          ['go.mod', 'go.sum', 'tools.go'].map((f) => `${kubeTestenv}/${m}/${f}`),
        ),
      ].sort(),
    );
    const dockerignore = await readFile(join(REPO_ROOT, '.dockerignore'), 'utf8');
    for (const source of sources) {
      expect(existsSync(join(REPO_ROOT, source)), source).toBe(true);
      expect(inContext(dockerignore, source), `${source} is excluded by .dockerignore`).toBe(true);
    }
    const run = renderTools.instructions
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.args)
      .join('\n');
    expect(run).toContain('bash build-render-tools.sh --into /out');
    // The tests build with the same script and the same function (build_into), so the image has
    // what they test.
    const script = await readFile(join(REPO_ROOT, kubeTestenv, 'build-render-tools.sh'), 'utf8');
    expect(script).toContain('build_into "$out.partial"');
    expect(script).toMatch(/--into \]\]; then\n {2}build_into /);
    expect(script).toContain('CGO_ENABLED=0');
    expect(script.match(/go build -trimpath/g)).toHaveLength(2);
    // The versions the image's binaries report are those the repository pins.
    const pinned = async (module: string, path: string) =>
      new RegExp(`require ${path.replace(/\./g, '\\.')} (v[\\d.]+)`).exec(
        await readFile(join(REPO_ROOT, kubeTestenv, module, 'go.mod'), 'utf8'),
      )?.[1];
    const helm = await pinned('helm', 'helm.sh/helm/v4');
    const kustomize = await pinned('kustomize', 'sigs.k8s.io/kustomize/kustomize/v5');
    expect([helm, kustomize]).toEqual(['v4.3.1', 'v5.8.2']);
    const bin = join(image, 'usr/local/bin');
    const version = (tool: string, ...args: string[]) =>
      spawnSync(join(bin, tool), args, { encoding: 'utf8', env: { HOME: image } }).stdout.trim();
    expect(version('helm', 'version', '--short')).toBe(helm);
    expect(version('kustomize', 'version')).toBe(kustomize);
    // The Go of the image is the Go the modules ask for.
    const goLine = /^go (\d+\.\d+)/m.exec(
      await readFile(join(REPO_ROOT, kubeTestenv, 'helm/go.mod'), 'utf8'),
    )?.[1];
    expect(dockerArgs.GO_IMAGE).toMatch(new RegExp(`^golang:${goLine?.replace('.', '\\.')}\\.`));
  });

  it('labels the image (OCI), ships no npm, npx or corepack, and keeps the base current by digest', async () => {
    const labels = runtime.instructions
      .filter((i) => i.keyword === 'LABEL')
      .map((i) => i.args)
      .join(' ');
    for (const key of ['title', 'description', 'licenses', 'version', 'revision', 'base.name']) {
      expect(labels).toContain(`org.opencontainers.image.${key}=`);
    }
    const run = runtime.instructions
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.args)
      .join('\n');
    for (const path of [
      '/usr/local/lib/node_modules/npm',
      '/usr/local/lib/node_modules/corepack',
      '/usr/local/bin/npx',
    ]) {
      expect(run).toContain(path);
    }
    const renovate = JSON.parse(await readFile(join(REPO_ROOT, 'renovate.json'), 'utf8')) as {
      extends: string[];
      packageRules: { matchDatasources?: string[]; minimumReleaseAge?: string }[];
    };
    expect(renovate.extends).toContain('docker:pinDigests');
    expect(renovate.packageRules.find((r) => r.matchDatasources?.includes('npm'))?.minimumReleaseAge).toBe(
      '3 days',
    );
  });

  it('resolves every module reachable from the entry point (dist/cli/launch.js) with production dependencies only', async () => {
    const dependencies = Object.keys(
      (
        JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as {
          dependencies: Record<string, string>;
        }
      ).dependencies,
    );
    const seen = new Set<string>();
    const queue = [join(app, SHIPPED_MAIN)];
    const bare = new Set<string>();
    while (queue.length > 0) {
      const file = queue.pop() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const specifier of specifiersOf(await readFile(file, 'utf8'))) {
        if (specifier.startsWith('.')) {
          const target = resolve(dirname(file), specifier);
          expect(
            existsSync(target),
            `${relative(app, file)} imports ${specifier}, missing in the image`,
          ).toBe(true);
          if (target.endsWith('.js')) queue.push(target);
        } else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
          bare.add(specifier);
          expect(
            dependencies,
            `${relative(app, file)} imports ${specifier}, not a production dependency`,
          ).toContain(packageName(specifier));
          expect(() => createRequire(file).resolve(specifier), specifier).not.toThrow();
        }
      }
    }
    expect(seen.size).toBeGreaterThan(100); // the whole program, not just main.ts
    expect([...bare].map(packageName)).toEqual(
      expect.arrayContaining(['yaml', 'isomorphic-git', '@kubernetes/client-node']),
    );
  });

  it('runs janus --help and every command --help from the copy', () => {
    const help = janus(['--help']);
    expect(help.status, help.stderr).toBe(0);
    const commands = [...help.stdout.matchAll(/^ {2}(\w+) {2,}/gm)].map((m) => m[1] as string);
    expect(commands).toEqual(
      expect.arrayContaining([
        'run',
        'controller',
        'validate',
        'plan',
        'status',
        'rollback',
        'recover',
        'demo',
      ]),
    );
    for (const command of commands) {
      const result = janus([command, '--help']);
      expect(result.status, `${command}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`Usage: janus ${command}`);
      expect(result.stderr).toBe('');
    }
    expect(janus(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("starts a checkout's bin/janus through its #! line and the same launcher", async () => {
    const [shebang, , , entry] = (await readFile(join(REPO_ROOT, 'bin/janus'), 'utf8')).split('\n');
    expect(shebang).toBe('#!/usr/bin/env node');
    expect(entry).toBe("import '../src/cli/launch.ts';");
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
    const direct = spawnSync(join(REPO_ROOT, 'bin/janus'), ['--version'], { env, encoding: 'utf8' });
    expect(direct.stdout.trim(), direct.stderr).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('runs long-running commands with their memory settings and one-shot commands without them', async () => {
    // An API server that accepts connections and never answers: each command stays in flight
    // long enough to read the flags its process really runs with, from /proc.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const home = await mkdtemp(join(tmpdir(), 'janus-flags-'));
    const kubeconfig = join(home, 'kubeconfig');
    await writeFile(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]\n` +
        'users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n',
    );
    const flagsOf = async (args: string[]) => {
      const child = spawn(process.execPath, [SHIPPED_MAIN, ...args], {
        cwd: app,
        env: { PATH: process.env.PATH ?? '', HOME: home, KUBECONFIG: kubeconfig },
        stdio: 'ignore',
      });
      try {
        // The launcher replaces itself (same PID) once it knows the flags; main then connects.
        await eventually(async () => {
          expect((await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0')).toContain(args[0]);
          expect(silentConnections).toBeGreaterThan(seen);
        });
        const flags = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8'))
          .split('\0')
          .filter((a) => a.startsWith('--'));
        const environment = (await readFile(`/proc/${child.pid}/environ`, 'utf8')).split('\0');
        return { flags, environment };
      } finally {
        seen = silentConnections;
        child.kill('SIGKILL');
      }
    };
    let silentConnections = 0;
    let seen = 0;
    silent.on('connection', () => silentConnections++);
    try {
      expect((await flagsOf(['controller', '--no-leader-elect'])).flags).toEqual(
        expect.arrayContaining([...CONTROLLER_NODE_FLAGS]),
      );
      // janus run: its own flags, and glibc's malloc setting in its environment.
      const repo = join(home, 'repo');
      expect(spawnSync('git', ['init', '--quiet', repo]).status).toBe(0);
      const run = await flagsOf(['run', '--repo', repo, '--no-leader-elect']);
      expect(run.flags).toEqual(expect.arrayContaining([...RUN_NODE_FLAGS]));
      for (const [name, value] of Object.entries(RUN_ENVIRONMENT))
        expect(run.environment).toContain(`${name}=${value}`);
      const oneShot = await flagsOf(['status', '--all-namespaces']);
      for (const flag of CONTROLLER_NODE_FLAGS) expect(oneShot.flags).not.toContain(flag);
      expect(oneShot.environment.filter((v) => v.startsWith('MALLOC_'))).toEqual([]);
    } finally {
      silent.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  it('says janus demo needs a source checkout (exit 2), instead of failing on a missing file', () => {
    const demo = janus(['demo']);
    expect(demo.status).toBe(2);
    expect(demo.stderr).toContain('janus demo runs from a source checkout of Janus');
  });
});
