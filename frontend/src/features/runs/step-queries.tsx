import { ChevronDown, ChevronRight, Database } from 'lucide-react';
import { useState } from 'react';
import type { QueryOut } from '@/client';
import { CopyButton } from '@/components/code-block';
import { cn, formatDuration, formatNumber } from '@/lib/utils';

/** SQL longer than this (lines, or characters when it is written on few lines) is folded to its first lines. */
const LONG_SQL_LINES = 4;
const LONG_SQL_CHARS = 320;

/** "1,204 rows · 38 ms": what a query returned and how long it took. */
export function queryFigures(q: Pick<QueryOut, 'rows' | 'duration_ms'>): string {
  return `${formatNumber(q.rows)} ${q.rows === 1 ? 'row' : 'rows'} · ${formatDuration(q.duration_ms)}`;
}

function QueryItem({ query, n }: { query: QueryOut; n: number }) {
  const sql = query.sql.trim();
  const long = sql.split('\n').length > LONG_SQL_LINES || sql.length > LONG_SQL_CHARS;
  const [open, setOpen] = useState(!long);
  return (
    <li className={cn('rounded-lg border bg-code', query.error && 'border-destructive/30')} data-testid="step-query" data-source={query.source}>
      <div className="flex items-center gap-2 px-3 pt-1.5 text-xs">
        <Database className="size-3.5 shrink-0 text-muted-foreground" />
        <span className="min-w-0 truncate font-medium" data-testid="query-source">
          {query.source}
        </span>
        <span className={cn('ml-auto shrink-0 text-right text-muted-foreground tabular-nums', query.error && 'text-destructive')} data-testid="query-figures">
          {query.error ? `failed · ${formatDuration(query.duration_ms)}` : queryFigures(query)}
        </span>
        <CopyButton text={sql} label={`Copy query ${n}`} className="-mr-2 shrink-0" />
      </div>
      {/* The padding sits outside the clamped block, or the line after the last shown one shows through it. */}
      <div className="px-3 pb-2">
        <pre className={cn('font-mono text-xs leading-relaxed whitespace-pre-wrap [overflow-wrap:anywhere]', !open && 'line-clamp-4')} data-testid="query-sql">
          {sql}
        </pre>
        {long && (
          <button
            type="button"
            className="mt-1 flex cursor-pointer items-center gap-1 text-[11px] font-medium text-muted-foreground hover:text-foreground"
            onClick={() => setOpen(!open)}
            aria-expanded={open}
          >
            {open ? <ChevronDown className="size-3" /> : <ChevronRight className="size-3" />}
            {open ? 'Show less' : 'Show all'}
          </button>
        )}
      </div>
      {query.error && (
        <p role="alert" className="border-t border-destructive/30 bg-destructive/5 px-3 py-2 font-mono text-xs whitespace-pre-wrap text-destructive" data-testid="query-error">
          {query.error}
        </p>
      )}
    </li>
  );
}

/** The queries a step's code ran on the project's data sources, each with its source, SQL and outcome. */
export function StepQueries({ queries }: { queries: QueryOut[] }) {
  if (!queries.length) return null;
  return (
    <section aria-label={queries.length === 1 ? 'Query' : `${queries.length} queries`} className="space-y-1.5" data-testid="step-queries">
      <h3 className="text-[11px] font-medium tracking-wide text-muted-foreground uppercase">{queries.length === 1 ? 'Query' : `Queries (${queries.length})`}</h3>
      <ol className="space-y-2">
        {queries.map((q, i) => (
          <QueryItem key={i} query={q} n={i + 1} />
        ))}
      </ol>
    </section>
  );
}
