import { describe, expect, it } from 'vitest';
import { commandsOf, docCommands, shellBlocks } from '../../support/doc-commands.ts';

const md = (...lines: string[]) => lines.join('\n');
const texts = (markdown: string) => docCommands([{ file: 'x.md', markdown }]).map((c) => c.text);

describe('shellBlocks', () => {
  it('takes the shell blocks only, with the line of their fence', () => {
    const blocks = shellBlocks(
      md(
        '# T',
        '```yaml',
        'a: 1',
        '```',
        '```sh',
        'ls',
        '```',
        '```',
        'plain',
        '```',
        '~~~bash',
        'pwd',
        '~~~',
      ),
      'x.md',
    );
    expect(blocks).toEqual([
      { file: 'x.md', line: 5, lang: 'sh', lines: ['ls'] },
      { file: 'x.md', line: 11, lang: 'bash', lines: ['pwd'] },
    ]);
  });

  it('removes the indentation of a fence inside a list item, and needs a matching fence to close', () => {
    const blocks = shellBlocks(
      md('1. Run:', '', '   ```sh', '   echo a', '   ```` x', '   ```', 'after'),
      'x.md',
    );
    expect(blocks.map((b) => b.lines)).toEqual([['echo a', '```` x']]);
  });

  it('runs an unclosed block to the end of the document', () => {
    expect(shellBlocks(md('```sh', 'ls'), 'x.md').map((b) => b.lines)).toEqual([['ls']]);
  });
});

describe('commandsOf', () => {
  it('one command per line; blank lines and comments are not commands', () => {
    expect(texts(md('```sh', '# setup', 'npm ci   # install', '', 'npm test', '```'))).toEqual([
      'npm ci',
      'npm test',
    ]);
  });

  it('joins backslash continuations, keeping the source as written', () => {
    const [cmd] = docCommands([
      { file: 'x.md', markdown: md('text', '```sh', 'kubectl create x \\', '  --flag=a   # why', '```') },
    ]);
    expect(cmd).toEqual({
      file: 'x.md',
      line: 3,
      source: 'kubectl create x \\\n  --flag=a   # why',
      text: 'kubectl create x --flag=a',
    });
  });

  it('keeps a # inside quotes or a word, and continues after a trailing pipe or && or an open quote', () => {
    expect(
      texts(md('```sh', `jq '.a # b' x#y "#z"`, 'a |', '  b &&', '  c', `echo 'one`, `two'`, '```')),
    ).toEqual([`jq '.a # b' x#y "#z"`, 'a | b && c', `echo 'one two'`]);
  });

  it("reads a placeholder such as <the Transaction's uid> as one word, not as an open quote", () => {
    expect(texts(md('```sh', "kubectl delete lease -l uid=<the Transaction's uid>", 'ls', '```'))).toEqual([
      "kubectl delete lease -l uid=<the Transaction's uid>",
      'ls',
    ]);
  });

  it('keeps a here-document with its command', () => {
    expect(texts(md('```sh', 'cat <<EOF > f', '# not a comment', 'EOF', 'ls', '```'))).toEqual([
      'cat <<EOF > f # not a comment EOF',
      'ls',
    ]);
  });

  it('in a console block, takes the lines after a prompt and leaves the output', () => {
    const [block] = shellBlocks(
      md('```console', '$ git log -1', 'abc123 commit', '$ ls', 'a', '```'),
      'x.md',
    );
    expect(block && commandsOf(block).map((c) => [c.line, c.text])).toEqual([
      [2, 'git log -1'],
      [4, 'ls'],
    ]);
  });
});
