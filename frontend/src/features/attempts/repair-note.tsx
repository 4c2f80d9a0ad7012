import { ChevronDown, ChevronRight, Wrench } from 'lucide-react';
import { useState } from 'react';
import { cn } from '@/lib/utils';
import type { RepairOut } from './types';

/** "Repair: 3 strategies, #2 continued", or "Repair: 3 strategies, no strategy worked". */
export function repairSummary(r: RepairOut): string {
  const n = r.strategies.length;
  const tried = `${n} ${n === 1 ? 'strategy' : 'strategies'}`;
  return `Repair: ${tried}, ${r.chosen != null ? `#${r.chosen} continued` : 'no strategy worked'}`;
}

/** A parallel repair of a failing step, where it happened in the step list; its strategies on expand. */
export function RepairNote({ repair }: { repair: RepairOut }) {
  const [open, setOpen] = useState(false);
  const failed = repair.chosen == null;
  return (
    <div className={cn('rounded-lg border bg-muted/60 px-3 py-2 text-sm', failed && 'border-destructive/30')} data-testid="repair" data-step={repair.step}>
      <button
        type="button"
        className="flex w-full cursor-pointer items-center gap-2 text-left"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        <Wrench className={cn('size-4 shrink-0', failed ? 'text-destructive' : 'text-muted-foreground')} aria-hidden />
        <span className="min-w-0 flex-1 font-medium">{repairSummary(repair)}</span>
        <span className="shrink-0 text-xs text-muted-foreground">after step {repair.step}</span>
        {open ? <ChevronDown className="size-3.5 shrink-0" /> : <ChevronRight className="size-3.5 shrink-0" />}
      </button>
      {open && (
        <ol className="mt-1.5 ml-6 list-decimal space-y-0.5 text-xs text-muted-foreground" data-testid="repair-strategies">
          {repair.strategies.map((s, i) => (
            <li key={i} className={cn(repair.chosen === i + 1 && 'font-medium text-foreground')}>
              {s}
              {repair.chosen === i + 1 && ' — continued the run'}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
