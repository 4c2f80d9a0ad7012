import { fireEvent, render, screen } from '@testing-library/react';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { CodeEditor, dedentEdit, indentEdit, newlineEdit, type Replacement } from './code-editor';

/** The text after a replacement, with the new selection marked by [ and ]. */
function after(value: string, r: Replacement): string {
  const text = value.slice(0, r.from) + r.text + value.slice(r.to);
  return text.slice(0, r.start) + '[' + text.slice(r.start, r.end) + ']' + text.slice(r.end);
}

describe('code editing keys', () => {
  it('Tab puts four spaces at the caret, or indents every line a selection touches', () => {
    expect(after('x = 1', indentEdit('x = 1', 0, 0))).toBe('    []x = 1');
    const code = 'for r in rows:\nprint(r)\nprint(1)';
    expect(after(code, indentEdit(code, 16, 30))).toBe('for r in rows:\n    p[rint(r)\n    print(]1)');
  });

  it('Shift+Tab takes up to four spaces off each touched line', () => {
    const code = 'if x:\n    a = 1\n  b = 2';
    expect(after(code, dedentEdit(code, 10, 10))).toBe('if x:\n[]a = 1\n  b = 2');
    expect(after(code, dedentEdit(code, 6, code.length))).toBe('if x:\n[a = 1\nb = 2]');
  });

  it('Enter keeps the indentation, one level deeper after a colon', () => {
    expect(after('    total = 0', newlineEdit('    total = 0', 13, 13))).toBe('    total = 0\n    []');
    expect(after('for r in rows:', newlineEdit('for r in rows:', 14, 14))).toBe('for r in rows:\n    []');
  });
});

function Editor({ onSubmit }: { onSubmit?: () => void }) {
  const [value, setValue] = useState('if x:');
  return <CodeEditor aria-label="Code" value={value} onChange={setValue} onSubmit={onSubmit} />;
}

describe('CodeEditor', () => {
  it('edits with the keys, submits on Ctrl+Enter, and lets Tab leave after Escape', () => {
    const onSubmit = vi.fn();
    render(<Editor onSubmit={onSubmit} />);
    const box = screen.getByRole('textbox', { name: 'Code' }) as HTMLTextAreaElement;
    box.setSelectionRange(5, 5);
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(box.value).toBe('if x:\n    ');
    expect(box.selectionStart).toBe(10);
    fireEvent.keyDown(box, { key: 'Enter', ctrlKey: true });
    expect(onSubmit).toHaveBeenCalledTimes(1);
    expect(box.value).toBe('if x:\n    ');
    fireEvent.keyDown(box, { key: 'Escape' });
    expect(fireEvent.keyDown(box, { key: 'Tab' })).toBe(true); // not prevented: focus moves on
    expect(fireEvent.keyDown(box, { key: 'Tab' })).toBe(false); // back in it, Tab indents again
  });
});
