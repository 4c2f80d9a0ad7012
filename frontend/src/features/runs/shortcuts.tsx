import { useEffect, useRef, useState } from 'react';
import { Dialog, DialogContent, DialogDescription, DialogTitle } from '@/components/ui/dialog';

/** The keyboard shortcuts of a session's page: every one listed here works there. */
export const SHORTCUTS: { keys: string[]; what: string }[] = [
  { keys: ['/'], what: 'Focus the question box' },
  { keys: ['Enter'], what: 'Send the question (in the question box, or when editing a question)' },
  { keys: ['Shift', 'Enter'], what: 'New line in the question' },
  { keys: ['Esc'], what: 'Stop the running question (also in the question box)' },
  { keys: ['Esc'], what: 'Close a dialog or menu; cancel editing a question' },
  { keys: ['?'], what: 'Show these shortcuts' },
];

/** Typing in a field is typing, not a shortcut. */
function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** Where Esc means something else: an open dialog or menu closes, an edited question or code is left. */
function escapeIsTaken(target: EventTarget | null): boolean {
  if (document.querySelector('[role="dialog"], [role="alertdialog"], [role="menu"], [role="listbox"]')) return true;
  // The question box has no use for Esc; any other text field may (cancel an edit, leave the code editor).
  return isTyping(target) && !(target instanceof HTMLElement && target.hasAttribute('data-composer'));
}

/**
 * `?` opens the shortcuts, `/` focuses the question box (outside text fields), and Esc stops
 * the running question when `stopRun` is given (a run is live) and Esc means nothing else there.
 */
export function useSessionShortcuts(focusComposer: () => void, stopRun?: (() => void) | null) {
  const [open, setOpen] = useState(false);
  const stop = useRef(stopRun);
  useEffect(() => {
    stop.current = stopRun;
  }, [stopRun]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      // A dialog or menu that closed on this Esc has marked it handled.
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === 'Escape') {
        if (stop.current && !escapeIsTaken(e.target)) {
          e.preventDefault();
          stop.current();
        }
        return;
      }
      if (isTyping(e.target)) return;
      if (e.key === '?') {
        e.preventDefault();
        setOpen(true);
      } else if (e.key === '/') {
        e.preventDefault();
        focusComposer();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [focusComposer]);
  return { open, setOpen };
}

export function ShortcutsDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="max-w-md">
        <DialogTitle>Keyboard shortcuts</DialogTitle>
        <DialogDescription>On a session's page, outside text fields unless said.</DialogDescription>
        <dl className="divide-y text-sm" data-testid="shortcuts">
          {SHORTCUTS.map((s) => (
            <div key={s.what} className="flex items-center justify-between gap-4 py-2">
              <dt className="text-muted-foreground">{s.what}</dt>
              <dd className="flex shrink-0 items-center gap-1">
                {s.keys.map((k) => (
                  <kbd key={k} className="rounded border bg-muted px-1.5 py-0.5 font-mono text-xs text-foreground shadow-xs">
                    {k}
                  </kbd>
                ))}
              </dd>
            </div>
          ))}
        </dl>
      </DialogContent>
    </Dialog>
  );
}
