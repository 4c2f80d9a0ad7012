import { ChevronDown, ChevronRight, ListChecks, Loader2 } from 'lucide-react';
import { useState } from 'react';
import { Collapsible, CollapsibleContent, CollapsibleTrigger } from '@/components/ui/collapsible';
import { formatTokens } from '@/lib/utils';
import { ModelMarkdown } from './answer';
import type { PlanView } from './run-reducer';

/**
 * Plans are written line by line ("Established: …", then numbered steps): keep each line on its
 * own, where Markdown would join lines that are not list items into one paragraph.
 */
export function keepLineBreaks(text: string): string {
  return text.replace(/([^\n])\n(?=[^\n])/g, '$1  \n');
}

/** The first line of a plan without its Markdown marks, shown while the plan is folded. */
export function previewLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return line.replace(/^\s*#+\s*/, '').replace(/`|\*\*|__/g, '').trim();
}

function planTitle(plan: PlanView, first: boolean): string {
  return first ? 'Plan' : `Revised plan (before step ${plan.step})`;
}

/**
 * One of the agent's plans, above the step it was written before. Open while it streams and
 * while it is the latest plan; an older one folds away when a revision arrives, unless the user
 * opened or closed it themselves.
 */
export function PlanCard({ plan, first, latest }: { plan: PlanView; first: boolean; latest: boolean }) {
  const [chosen, setChosen] = useState<boolean | null>(null);
  const open = chosen ?? (plan.streaming || latest);
  const title = planTitle(plan, first);
  const firstLine = previewLine(plan.text);
  return (
    <Collapsible open={open} onOpenChange={setChosen} asChild>
      <section className="rounded-xl border border-primary/20 bg-primary/[0.03] shadow-xs" data-testid="run-plan" data-step={plan.step} aria-label={title}>
        <CollapsibleTrigger className="flex w-full cursor-pointer items-center gap-2 rounded-xl px-4 py-3 text-left text-xs text-muted-foreground hover:text-foreground">
          {open ? <ChevronDown className="size-3.5 shrink-0" /> : <ChevronRight className="size-3.5 shrink-0" />}
          <span className="flex shrink-0 items-center gap-1.5 rounded-md bg-primary/10 px-1.5 py-0.5 font-medium text-primary">
            <ListChecks className="size-3.5" />
            {title}
          </span>
          {plan.streaming && <Loader2 className="size-3.5 shrink-0 animate-spin" aria-label="Plan being written" />}
          {!open && <span className="min-w-0 truncate">{firstLine}</span>}
          {!plan.streaming && plan.tokensIn + plan.tokensOut > 0 && (
            <span className="ml-auto shrink-0 pl-2 tabular-nums">{formatTokens(plan.tokensIn + plan.tokensOut)}</span>
          )}
        </CollapsibleTrigger>
        <CollapsibleContent className="px-4 pb-3">
          {plan.text ? (
            <ModelMarkdown text={keepLineBreaks(plan.text)} className="text-sm [&>:first-child]:mt-0 [&>:last-child]:mb-0" data-testid="plan-text" />
          ) : (
            <p className="text-sm text-muted-foreground">Writing a plan…</p>
          )}
        </CollapsibleContent>
      </section>
    </Collapsible>
  );
}
