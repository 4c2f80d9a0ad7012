import { useQuery } from '@tanstack/react-query';
import { Code2, FileImage, Loader2, MessageSquare, Search, Sparkles, Type } from 'lucide-react';
import { useCallback, useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { create } from 'zustand';
import type { SearchHit } from '@/client';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogTitle } from '@/components/ui/dialog';
import { cn } from '@/lib/utils';
import { Highlighted } from './highlighted';
import { PAGE_SIZE, searchQuery } from './queries';

const KIND = {
  session: { label: 'Session title', Icon: Type },
  question: { label: 'Question', Icon: MessageSquare },
  answer: { label: 'Answer', Icon: Sparkles },
  code: { label: 'Code', Icon: Code2 },
  artifact: { label: 'Result', Icon: FileImage },
} as const;

/** Where a hit leads: its session, scrolled to its run. */
export const hitLink = (h: SearchHit) => `/projects/${h.project_id}/sessions/${h.session_id}${h.run_id ? `?run=${h.run_id}` : ''}`;

/** Ctrl+K (⌘K on a Mac) opens search from anywhere; `/` stays the question box's. */
export function useSearchShortcut(open: () => void) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.metaKey || e.ctrlKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        open();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);
}

function useDebounced(value: string, ms: number) {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

/** Whether the search dialog is open: one dialog for the app (SearchHost), opened by any search button or Ctrl+K. */
export const useSearchStore = create<{ open: boolean; setOpen: (open: boolean) => void }>((set) => ({
  open: false,
  setOpen: (open) => set({ open }),
}));

/** The app's search dialog and its shortcut, mounted once (in the layout). */
export function SearchHost() {
  const open = useSearchStore((s) => s.open);
  const setOpen = useSearchStore((s) => s.setOpen);
  const show = useCallback(() => setOpen(true), [setOpen]);
  useSearchShortcut(show);
  return <SearchDialog open={open} onOpenChange={setOpen} />;
}

export function SearchButton({ className, compact }: { className?: string; compact?: boolean }) {
  const setOpen = useSearchStore((s) => s.setOpen);
  if (compact)
    return (
      <Button variant="ghost" size="icon-sm" aria-label="Search" title="Search" className={className} onClick={() => setOpen(true)} data-testid="search-open">
        <Search />
      </Button>
    );
  const mac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);
  return (
      <Button
        variant="outline"
        size="sm"
        className={cn('w-full justify-start gap-2 font-normal text-muted-foreground', className)}
        onClick={() => setOpen(true)}
        data-testid="search-open"
      >
        <Search /> Search
        <kbd className="ml-auto rounded border bg-muted px-1.5 font-sans text-[10px]">{mac ? '⌘K' : 'Ctrl K'}</kbd>
      </Button>
  );
}

export function SearchDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const [text, setText] = useState('');
  const [offset, setOffset] = useState(0);
  const q = useDebounced(text.trim(), 200);
  useEffect(() => setOffset(0), [q]);
  const results = useQuery({ ...searchQuery(q, offset), meta: { silent: true } });
  const navigate = useNavigate();
  const go = (h: SearchHit) => {
    onOpenChange(false);
    void navigate(hitLink(h));
  };
  const total = results.data?.total ?? 0;
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="top-[10%] max-w-2xl translate-y-0 gap-3 p-4 sm:p-5" data-testid="search-dialog">
        <DialogTitle className="sr-only">Search</DialogTitle>
        <DialogDescription className="sr-only">Questions, answers, code and results of every session you can see</DialogDescription>
        <div className="flex items-center gap-2 border-b pb-3 pr-6">
          <Search className="size-4 shrink-0 text-muted-foreground" />
          <input
            autoFocus
            value={text}
            onChange={(e) => setText(e.target.value)}
            maxLength={200}
            placeholder="Search questions, answers, code and results…"
            aria-label="Search"
            className="min-w-0 flex-1 bg-transparent text-sm outline-none placeholder:text-muted-foreground"
            data-testid="search-input"
          />
          {results.isFetching && <Loader2 className="size-4 animate-spin text-muted-foreground" />}
        </div>
        <div className="max-h-[60vh] min-h-16 overflow-y-auto">
          {!q && <p className="py-4 text-center text-sm text-muted-foreground">Find a question, an answer, a line of code or a chart's name in any session of your projects.</p>}
          {q && results.data && total === 0 && <p className="py-4 text-center text-sm text-muted-foreground">Nothing matches “{q}”.</p>}
          {results.error && <p className="py-4 text-center text-sm text-destructive">{results.error.message}</p>}
          <ul className="space-y-1" data-testid="search-results">
            {q &&
              results.data?.items.map((h, i) => {
                const { label, Icon } = KIND[h.kind];
                return (
                  <li key={`${h.kind}-${h.run_id ?? h.session_id}-${i}`}>
                    <a
                      href={hitLink(h)}
                      onClick={(e) => {
                        if (e.metaKey || e.ctrlKey || e.shiftKey) return;
                        e.preventDefault();
                        go(h);
                      }}
                      className="block rounded-lg px-3 py-2 hover:bg-muted focus-visible:bg-muted focus-visible:outline-none"
                      data-testid="search-hit"
                      data-kind={h.kind}
                    >
                      <span className="flex items-center gap-2 text-xs text-muted-foreground">
                        <Icon className="size-3.5 shrink-0" />
                        <span className="shrink-0">{label}</span>
                        <span aria-hidden>·</span>
                        <span className="min-w-0 truncate">{h.title}</span>
                      </span>
                      <span className={cn('mt-0.5 line-clamp-3 text-sm break-words', h.kind === 'code' && 'font-mono text-xs whitespace-pre-wrap')}>
                        <Highlighted snippet={h.snippet} />
                      </span>
                    </a>
                  </li>
                );
              })}
          </ul>
        </div>
        {q && total > PAGE_SIZE && (
          <div className="flex items-center justify-between border-t pt-3 text-xs text-muted-foreground">
            <span>
              {offset + 1}–{Math.min(offset + PAGE_SIZE, total)} of {total}
            </span>
            <span className="flex gap-2">
              <Button variant="outline" size="sm" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
                Previous
              </Button>
              <Button variant="outline" size="sm" disabled={offset + PAGE_SIZE >= total} onClick={() => setOffset(offset + PAGE_SIZE)}>
                Next
              </Button>
            </span>
          </div>
        )}
      </DialogContent>
    </Dialog>
  );
}
