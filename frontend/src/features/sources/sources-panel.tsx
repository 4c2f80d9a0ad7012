import { useQuery } from '@tanstack/react-query';
import { AlertCircle, CheckCircle2, CircleDashed, Database, FileBox, Loader2, Pencil, Plus, RefreshCw, ShieldAlert, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { toast } from 'sonner';
import type { SourceOut } from '@/client';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { Badge } from '@/components/ui/badge';
import { GuardedButton } from '@/components/guarded-button';
import { blockedFor, useBlocked, useProjectRole } from '@/features/projects/role';
import { cn, formatDate, formatNumber } from '@/lib/utils';
import { useCheckSource, useDeleteSource } from './mutations';
import { sourcesQuery } from './queries';
import { SchemaBrowser } from './schema-browser';
import { AddSourceDialog, EditSourceDialog } from './source-dialog';
import { accessSentence, isFileKind, kindLabel } from './source-url';

const STATUS = {
  ready: { label: 'Ready', variant: 'success', Icon: CheckCircle2 },
  refused: { label: 'Refused', variant: 'error', Icon: ShieldAlert },
  failed: { label: 'Failed', variant: 'error', Icon: AlertCircle },
  unchecked: { label: 'Unchecked', variant: 'default', Icon: CircleDashed },
} as const;

type Status = keyof typeof STATUS;

const statusOf = (status: string): Status => (status in STATUS ? (status as Status) : 'unchecked');

export function SourceStatusBadge({ status, checking }: { status: string; checking?: boolean }) {
  if (checking)
    return (
      <Badge variant="running" data-testid="source-status" data-status="checking">
        <Loader2 className="animate-spin" /> Checking…
      </Badge>
    );
  const { label, variant, Icon } = STATUS[statusOf(status)];
  return (
    <Badge variant={variant} data-testid="source-status" data-status={status}>
      <Icon /> {label}
    </Badge>
  );
}

/** Tells how a check went (on adding, changing the URL, or checking again): the server's sentence. */
export function sayChecked(name: string, ok: boolean, status: string, detail: string, added = false) {
  if (ok) toast.success(added ? `${name} was added and is ready.` : `${name} is ready.`, { description: detail });
  else {
    const what = status === 'refused' ? 'was refused' : 'could not be used';
    toast.error(added ? `${name} was added, but ${what}.` : `${name} ${what}.`, { description: detail || undefined });
  }
}

/** What is known of a source beside its status: how it stays read-only, its tables, when it was checked. */
export function sourceFacts(s: Pick<SourceOut, 'access' | 'table_count' | 'checked_at' | 'schema_truncated'>): string[] {
  const facts: string[] = [];
  const access = accessSentence(s.access);
  if (access) facts.push(access);
  if (s.table_count != null) facts.push(`${formatNumber(s.table_count)} ${s.table_count === 1 ? 'table' : 'tables'}`);
  facts.push(s.checked_at ? `checked ${formatDate(s.checked_at)}` : 'never checked');
  return facts;
}

function SourceRow({
  source,
  open,
  onToggle,
  onEdit,
  onDelete,
}: {
  source: SourceOut;
  open: boolean;
  onToggle: () => void;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const check = useCheckSource(source.project_id);
  const role = useProjectRole();
  const status = statusOf(source.status);
  const KindIcon = isFileKind(source.kind) ? FileBox : Database;
  return (
    <li className="overflow-hidden rounded-lg border bg-card" data-testid="source-row" data-source={source.name}>
      <div className="flex items-start gap-2 px-3 py-2">
        <button type="button" className="flex min-w-0 flex-1 cursor-pointer items-start gap-3 text-left" onClick={onToggle} aria-expanded={open} aria-label={`${open ? 'Hide' : 'Show'} the tables of ${source.name}`}>
          <KindIcon className="mt-0.5 size-5 shrink-0 text-primary" />
          <span className="min-w-0 flex-1">
            <span className="flex min-w-0 flex-wrap items-center gap-x-2 gap-y-1">
              <span className="truncate text-sm font-medium">{source.name}</span>
              <span className="text-xs text-muted-foreground" data-testid="source-kind">
                {kindLabel(source.kind)}
              </span>
              <SourceStatusBadge status={source.status} checking={check.isPending} />
            </span>
            <span className="block font-mono text-xs break-all text-muted-foreground" data-testid="source-url">
              {source.display_url}
            </span>
          </span>
        </button>
        <GuardedButton
          variant="ghost"
          size="icon-sm"
          aria-label={`Check ${source.name} again`}
          title="Check again"
          blockedBecause={blockedFor(role, 'editor', 'check a source again')}
          disabled={check.isPending}
          onClick={() => check.mutate(source.id, { onSuccess: (r) => sayChecked(source.name, r.ok, r.status, r.detail) })}
        >
          <RefreshCw className={cn(check.isPending && 'animate-spin')} />
        </GuardedButton>
        <GuardedButton
          variant="ghost"
          size="icon-sm"
          aria-label={`Edit ${source.name}`}
          title="Edit"
          blockedBecause={blockedFor(role, 'editor', 'edit data sources')}
          onClick={onEdit}
        >
          <Pencil />
        </GuardedButton>
        <GuardedButton
          variant="ghost"
          size="icon-sm"
          aria-label={`Delete ${source.name}`}
          title="Delete"
          blockedBecause={blockedFor(role, 'owner', 'delete data sources')}
          onClick={onDelete}
        >
          <Trash2 />
        </GuardedButton>
      </div>
      <div className="space-y-0.5 px-3 pb-2.5 pl-11 text-xs">
        {source.status_detail && (
          <p
            className={cn('break-words', STATUS[status].variant === 'error' ? 'text-destructive' : 'text-foreground/80')}
            data-testid="source-status-detail"
          >
            {source.status_detail}
          </p>
        )}
        <p className="text-muted-foreground" data-testid="source-facts">
          {sourceFacts(source).join(' · ')}
        </p>
        {source.description && <p className="whitespace-pre-wrap text-muted-foreground">{source.description}</p>}
      </div>
      {open && <SchemaBrowser source={source} />}
    </li>
  );
}

/** A project's databases: add one (by URL or fields), check it, browse and describe its tables, change or delete it. */
export function SourcesPanel({ projectId }: { projectId: string }) {
  const sources = useQuery(sourcesQuery(projectId));
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<SourceOut | null>(null);
  const [toDelete, setToDelete] = useState<SourceOut | null>(null);
  const [openId, setOpenId] = useState<string | null>(null);
  const del = useDeleteSource(projectId);
  const addBlocked = useBlocked('owner', "add data sources (their credentials are the owners')");
  const items = sources.data?.items ?? [];
  return (
    <section aria-labelledby="sources-heading" className="scroll-mt-6 space-y-3" data-testid="sources-panel">
      <div className="flex items-start justify-between gap-3">
        <div>
          <h2 id="sources-heading" className="text-base font-semibold">
            Data sources
          </h2>
          <p className="text-sm text-muted-foreground">Databases the agent queries with sql(), read-only. Their credentials stay on the server.</p>
        </div>
        <GuardedButton variant="outline" size="sm" blockedBecause={addBlocked} onClick={() => setAdding(true)}>
          <Plus /> Add source
        </GuardedButton>
      </div>
      {sources.data && items.length === 0 && (
        <p className="text-sm text-muted-foreground">No data sources yet. Add a PostgreSQL or MySQL database, or a SQLite or DuckDB file on the server.</p>
      )}
      <ul className="space-y-2">
        {items.map((s) => (
          <SourceRow
            key={s.id}
            source={s}
            open={openId === s.id}
            onToggle={() => setOpenId(openId === s.id ? null : s.id)}
            onEdit={() => setEditing(s)}
            onDelete={() => setToDelete(s)}
          />
        ))}
      </ul>
      <AddSourceDialog
        projectId={projectId}
        open={adding}
        onOpenChange={setAdding}
        onAdded={(s) => {
          setAdding(false);
          setOpenId(s.id);
          sayChecked(s.name, s.status === 'ready', s.status, s.status_detail, true);
        }}
      />
      <EditSourceDialog
        source={editing}
        onOpenChange={(o) => !o && setEditing(null)}
        onSaved={(s, checked) => {
          setEditing(null);
          if (checked) sayChecked(s.name, s.status === 'ready', s.status, s.status_detail);
        }}
      />
      <ConfirmDialog
        open={!!toDelete}
        onOpenChange={(o) => !o && setToDelete(null)}
        title="Delete data source?"
        description={`“${toDelete?.name}” will be removed from this project, with its descriptions of tables and columns. Questions already answered keep the queries they ran.`}
        pending={del.isPending}
        onConfirm={() => toDelete && del.mutate(toDelete.id, { onSuccess: () => setToDelete(null) })}
      />
    </section>
  );
}
