import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ShortcutsDialog, useSessionShortcuts } from './shortcuts';

function Page({ focus }: { focus: () => void }) {
  const s = useSessionShortcuts(focus);
  return (
    <>
      <textarea aria-label="box" />
      <ShortcutsDialog open={s.open} onOpenChange={s.setOpen} />
    </>
  );
}

describe('session shortcuts', () => {
  it('opens the list on ?, focuses the composer on /, and leaves typing alone', () => {
    const focus = vi.fn();
    render(<Page focus={focus} />);
    fireEvent.keyDown(screen.getByLabelText('box'), { key: '?' });
    fireEvent.keyDown(screen.getByLabelText('box'), { key: '/' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(focus).not.toHaveBeenCalled();
    fireEvent.keyDown(document.body, { key: '/' });
    expect(focus).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(document.body, { key: '?' });
    expect(screen.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeTruthy();
    expect(screen.getByTestId('shortcuts').textContent).toContain('Focus the question box');
  });
});
