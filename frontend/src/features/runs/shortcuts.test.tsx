import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ShortcutsDialog, useSessionShortcuts } from './shortcuts';

function Page({ focus, stop }: { focus: () => void; stop?: (() => void) | null }) {
  const s = useSessionShortcuts(focus, stop);
  return (
    <>
      <textarea aria-label="box" />
      <textarea aria-label="question" data-composer />
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

  it('stops a running question on Esc, unless Esc closes a dialog or leaves another field', () => {
    const stop = vi.fn();
    const { rerender } = render(<Page focus={vi.fn()} stop={stop} />);
    fireEvent.keyDown(screen.getByLabelText('box'), { key: 'Escape' });
    expect(stop).not.toHaveBeenCalled();
    fireEvent.keyDown(document.body, { key: '?' });
    const dialog = screen.getByRole('dialog', { name: 'Keyboard shortcuts' });
    expect(dialog.textContent).toContain('Stop the running question');
    fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(stop).not.toHaveBeenCalled();
    fireEvent.keyDown(document.body, { key: 'Escape' });
    expect(stop).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(screen.getByLabelText('question'), { key: 'Escape' });
    expect(stop).toHaveBeenCalledTimes(2);
    // No run is live: Esc does nothing.
    rerender(<Page focus={vi.fn()} stop={null} />);
    fireEvent.keyDown(document.body, { key: 'Escape' });
    expect(stop).toHaveBeenCalledTimes(2);
  });
});
