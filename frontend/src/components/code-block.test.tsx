import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { CodeBlock } from './code-block';

const LONG = `df = sql("SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM orders WHERE created_at >= '2025-01-01' GROUP BY region")`;

describe('CodeBlock', () => {
  it('wraps long lines, and unwraps them into a block that scrolls on request', () => {
    render(<CodeBlock code={`${LONG}\nprint(df)`} />);
    const code = screen.getByTestId('code');
    expect(code.dataset.wrap).toBe('wrap');
    expect(code.className).toContain('whitespace-pre-wrap');
    fireEvent.click(screen.getByRole('button', { name: 'Show long lines unwrapped' }));
    expect(code.dataset.wrap).toBe('scroll');
    expect(code.className).toContain('overflow-x-scroll');
    expect(code.className).toContain('code-scroll');
    fireEvent.click(screen.getByRole('button', { name: 'Wrap long lines' }));
    expect(code.dataset.wrap).toBe('wrap');
  });

  it('offers no toggle when every line is short', () => {
    render(<CodeBlock code={'total = df.amount.sum()\nprint(total)'} />);
    expect(screen.queryByRole('button', { name: /long lines/ })).toBeNull();
    expect(screen.getByRole('button', { name: 'Copy code' })).toBeTruthy();
  });
});
