/** Foreign text in a forge's Markdown shows as text: no link, image, HTML, emphasis or new block. */
import { describe, expect, it } from 'vitest';
import { htmlText, markdownCode } from '../../../src/text/markdown.ts';

describe('markdownCode', () => {
  it('puts text in a code span, where links, bare URLs, HTML and emphasis are shown as they are', () => {
    expect(markdownCode('[x](http://evil) https://evil.example <b>hi</b> **bold** @team')).toBe(
      '`[x](http://evil) https://evil.example <b>hi</b> **bold** @team`',
    );
  });

  it('fences with more backticks than any run inside, so the text cannot close the span', () => {
    expect(markdownCode('a `b` c')).toBe('``a `b` c``');
    // A backtick at an end is padded with a space, which CommonMark strips again.
    expect(markdownCode('``` ![img](http://evil/x.png) ```')).toBe(
      '```` ``` ![img](http://evil/x.png) ``` ````',
    );
    expect(markdownCode(' both ')).toBe('`  both  `');
  });

  it('keeps the text on one line, so no line of it starts a heading, a list or a table row', () => {
    expect(markdownCode('ok\n# Approved\n- [x] safe')).toBe('`ok # Approved - [x] safe`');
  });

  it('turns control and bidi characters into "?"', () => {
    expect(markdownCode('file\u202egnp.exe')).toBe('`file?gnp.exe`');
  });
});

describe('htmlText', () => {
  it('escapes what would be markup inside an HTML block', () => {
    expect(htmlText(`<a href="http://evil">x</a> & 'q'`)).toBe(
      '&lt;a href=&quot;http://evil&quot;&gt;x&lt;/a&gt; &amp; &#39;q&#39;',
    );
    expect(htmlText('two\nlines\u0007')).toBe('two lines?');
  });
});
