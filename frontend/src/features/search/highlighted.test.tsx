import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Highlighted, snippetParts } from './highlighted';

describe('a search snippet', () => {
  it('marks the hits and unescapes the text', () => {
    expect(snippetParts('What is the <mark>revenue</mark> &amp; margin?')).toEqual([
      { text: 'What is the ', hit: false },
      { text: 'revenue', hit: true },
      { text: ' & margin?', hit: false },
    ]);
  });

  it('shows markup in a question as text, never as HTML', () => {
    const { container } = render(<Highlighted snippet={'&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; <mark>revenue</mark>'} />);
    expect(container.querySelector('script')).toBeNull();
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelectorAll('mark')).toHaveLength(1);
    expect(container.textContent).toBe('<script>alert(1)</script><img src=x onerror=alert(1)> revenue');
  });

  it('a raw tag from a broken server stays text too', () => {
    const { container } = render(<Highlighted snippet={'<b>bold</b> <mark>x</mark>'} />);
    expect(container.querySelector('b')).toBeNull();
    expect(container.textContent).toBe('<b>bold</b> x');
  });
});
