import { describe, expect, it } from 'vitest';
import { formatCommitMessage, parseTrailers, withTrailer } from '../../../src/results/commit-message.ts';

describe('withTrailer', () => {
  it('adds to the trailer paragraph a message ends in', () => {
    const message = formatCommitMessage('default/a: Committed', [], {
      transaction: 'default/a',
      phase: 'Committed',
    });
    const out = withTrailer(message, 'Janus-Result', 'r-1');
    expect(out).toBe(
      'default/a: Committed\n\nJanus-Transaction: default/a\nJanus-Phase: Committed\nJanus-Result: r-1\n',
    );
    expect(parseTrailers(out)['Janus-Result']).toBe('r-1');
  });

  it('starts a trailer paragraph after a message that has none, so the subject stays one line', () => {
    expect(withTrailer('default/a: Committed\n', 'Janus-Result', 'r-1')).toBe(
      'default/a: Committed\n\nJanus-Result: r-1\n',
    );
    expect(withTrailer('subject\n\nA body: with a colon.\nand more\n', 'Janus-Result', 'r')).toBe(
      'subject\n\nA body: with a colon.\nand more\n\nJanus-Result: r\n',
    );
  });
});
