import { AlertTriangle } from 'lucide-react';
import { useId, useState } from 'react';
import type { ProjectOut } from '@/client';
import { GuardedButton } from '@/components/guarded-button';
import { Input, Label } from '@/components/ui/input';
import { cn, formatCost, formatNumber, formatTokens } from '@/lib/utils';
import { useBlocked } from './role';
import { budgetProgress, parseBudget, type BudgetKind, type BudgetProgress } from './budget';
import { useUpdateProjectBudget } from './mutations';

const FIELD = { tokens: 'budget_tokens', usd: 'budget_usd' } as const;
const LABEL = { tokens: 'Token budget', usd: 'Cost budget (USD)' } as const;

function Stat({ label, value, hint, testId }: { label: string; value: string; hint?: string; testId: string }) {
  return (
    <div className="space-y-0.5">
      <dt className="text-xs text-muted-foreground">{label}</dt>
      <dd className="text-lg font-semibold tabular-nums" title={hint} data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}

function amount(kind: BudgetKind, n: number): string {
  return kind === 'tokens' ? formatTokens(n) : formatCost(n);
}

function ProgressBar({ kind, progress }: { kind: BudgetKind; progress: BudgetProgress }) {
  const state = progress.reached ? 'reached' : progress.percent >= 80 ? 'near' : 'ok';
  return (
    <div className="space-y-1">
      <div
        role="progressbar"
        aria-label={`${LABEL[kind]} used`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.min(100, Math.floor(progress.percent))}
        aria-valuetext={`${amount(kind, progress.used)} of ${amount(kind, progress.limit)}`}
        data-state={state}
        data-testid={`budget-bar-${kind}`}
        className="h-2 overflow-hidden rounded-full bg-muted"
      >
        <div
          className={cn(
            'h-full rounded-full transition-[width]',
            state === 'reached' ? 'bg-destructive' : state === 'near' ? 'bg-amber-500' : 'bg-primary',
          )}
          style={{ width: `${Math.min(100, progress.percent)}%` }}
        />
      </div>
      <p className={cn('flex justify-between gap-2 text-xs tabular-nums', progress.reached ? 'text-destructive' : 'text-muted-foreground')}>
        <span>
          {amount(kind, progress.used)} of {amount(kind, progress.limit)}
        </span>
        <span>{formatNumber(Math.floor(progress.percent))} %</span>
      </p>
    </div>
  );
}

/** One budget (tokens or dollars): its bar, and a small form to set or remove it. */
export function BudgetForm({ project, kind }: { project: ProjectOut; kind: BudgetKind }) {
  const current = project[FIELD[kind]];
  // Keyed by the saved value (below), so the input starts from it again after each save.
  const [text, setText] = useState(current == null ? '' : kind === 'tokens' ? formatNumber(current) : String(current));
  const [invalid, setInvalid] = useState<string | null>(null);
  const update = useUpdateProjectBudget(project.id);
  const blocked = useBlocked('owner', 'change budgets');
  const id = useId();
  const progress = budgetProgress(project, kind);
  const error = invalid ?? (update.error ? update.error.message : null);
  const unpriced = kind === 'usd' && project.cost_usd == null && project.tokens_in + project.tokens_out > 0;

  const save = (value: number | null) => {
    update.reset();
    update.mutate({ [FIELD[kind]]: value });
  };

  return (
    <form
      className="space-y-2"
      data-testid={`budget-${kind}`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const parsed = parseBudget(kind, text);
        if ('error' in parsed) {
          setInvalid(parsed.error);
          return;
        }
        setInvalid(null);
        save(parsed.value);
      }}
    >
      <div className="flex items-baseline justify-between gap-2">
        <Label htmlFor={id}>{LABEL[kind]}</Label>
        {!progress && <span className="text-xs text-muted-foreground">No budget</span>}
      </div>
      <div className="flex gap-2">
        <Input
          id={id}
          inputMode={kind === 'tokens' ? 'numeric' : 'decimal'}
          placeholder={kind === 'tokens' ? 'e.g. 500,000' : 'e.g. 5.00'}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setInvalid(null);
          }}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
          className="max-w-48"
          disabled={!!blocked}
          title={blocked ?? undefined}
        />
        <GuardedButton type="submit" variant="outline" blockedBecause={blocked} disabled={update.isPending || !text.trim()}>
          Save
        </GuardedButton>
        {current != null && (
          <GuardedButton
            type="button"
            variant="ghost"
            blockedBecause={blocked}
            disabled={update.isPending}
            onClick={() => save(null)}
            aria-label={`Remove the ${LABEL[kind].toLowerCase()}`}
          >
            Remove
          </GuardedButton>
        )}
      </div>
      {error && (
        <p id={`${id}-error`} role="alert" className="text-xs text-destructive">
          {error}
        </p>
      )}
      {progress && <ProgressBar kind={kind} progress={progress} />}
      {unpriced && (
        <p className="text-xs text-muted-foreground">The models used so far have no known price, so they count as $0 against this budget.</p>
      )}
    </form>
  );
}

/** What the project has spent on its questions, and the budgets that bound it. */
export function UsagePanel({ project }: { project: ProjectOut }) {
  const reached = (['tokens', 'usd'] as const).some((k) => budgetProgress(project, k)?.reached);
  return (
    <section id="usage" aria-labelledby="usage-heading" className="scroll-mt-6 space-y-3" data-testid="project-usage">
      <div>
        <h2 id="usage-heading" className="text-base font-semibold">
          Usage and budget
        </h2>
        <p className="text-sm text-muted-foreground">
          What this project's questions have used so far. Once a budget is reached, new questions are refused.
        </p>
      </div>
      <div className="divide-y rounded-lg border bg-card">
        <dl className="grid grid-cols-3 gap-4 px-4 py-3">
          <Stat label="Tokens in" value={formatNumber(project.tokens_in)} testId="usage-tokens-in" />
          <Stat label="Tokens out" value={formatNumber(project.tokens_out)} testId="usage-tokens-out" />
          <Stat
            label="Cost"
            testId="usage-cost"
            value={formatCost(project.tokens_in + project.tokens_out === 0 ? (project.cost_usd ?? 0) : project.cost_usd)}
            hint={project.cost_usd == null ? 'Unknown: no model used here has a known price.' : undefined}
          />
        </dl>
        {reached && (
          <p role="status" className="flex items-center gap-2 bg-destructive/5 px-4 py-2.5 text-sm font-medium text-destructive" data-testid="budget-reached">
            <AlertTriangle className="size-4 shrink-0" />
            <span>Budget reached: new questions are refused until it is raised.</span>
          </p>
        )}
        <div className="grid gap-6 px-4 py-4 md:grid-cols-2">
          <BudgetForm key={`tokens-${project.budget_tokens}`} project={project} kind="tokens" />
          <BudgetForm key={`usd-${project.budget_usd}`} project={project} kind="usd" />
        </div>
      </div>
    </section>
  );
}
