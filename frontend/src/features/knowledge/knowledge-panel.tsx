import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { BookOpen, Plus, Search } from 'lucide-react';
import { useDeferredValue, useEffect, useMemo, useState } from 'react';
import { toast } from 'sonner';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { GuardedButton } from '@/components/guarded-button';
import { LoadState } from '@/components/notice';
import { Input } from '@/components/ui/input';
import { useAuthStore } from '@/features/auth/auth-store';
import { filesQuery } from '@/features/files/queries';
import { useBlocked } from '@/features/projects/role';
import { sourcesQuery } from '@/features/sources/queries';
import { cn } from '@/lib/utils';
import { ItemCard, type ItemActions } from './item-card';
import { ItemDialog, SELECT, type ItemFields } from './item-dialog';
import { KINDS, sortItems, STATUSES, type Names } from './knowledge';
import { useAddItem, useChangeItem, useDeleteItem } from './mutations';
import { knowledgeQuery } from './queries';
import type { KnowledgeItem, KnowledgeKind, KnowledgeStatus } from './types';

type Editing = { mode: 'add' | 'edit' | 'approve'; item: KnowledgeItem | null };

/** What knowledge is for, said where there is none yet. */
export const EMPTY_TEXT =
  'Nothing here yet. Knowledge is what the team wants the agent to know with every question: what a term means (“an active customer ordered in the last 90 days”), rules (“revenue excludes refunded orders”), what columns mean, and questions answered correctly before. The agent proposes items from its runs; an editor approves them. Every answer says which items shaped it.';

/**
 * The project's knowledge: proposals first (Approve, Edit then approve, Reject), then the approved
 * and rejected items; filtered by kind and status, searched. Editors add, edit and delete; viewers
 * read. `focus` is an item to show (a "Shaped by" link), scrolled to and outlined.
 */
export function KnowledgePanel({ projectId, focus, initialStatus }: { projectId: string; focus?: string | null; initialStatus?: KnowledgeStatus | null }) {
  const [kind, setKind] = useState<KnowledgeKind | ''>('');
  const [status, setStatus] = useState<KnowledgeStatus | ''>(initialStatus ?? '');
  const [q, setQ] = useState('');
  const search = useDeferredValue(q);
  const list = useQuery({ ...knowledgeQuery(projectId, { kind: kind || null, status: status || null, q: search }), placeholderData: keepPreviousData });
  const files = useQuery(filesQuery(projectId));
  const sources = useQuery(sourcesQuery(projectId));
  const me = useAuthStore((s) => s.auth?.user.id ?? null);
  const blocked = useBlocked('editor', 'change the team’s knowledge');
  const add = useAddItem(projectId);
  const change = useChangeItem(projectId);
  const del = useDeleteItem(projectId);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [deleting, setDeleting] = useState<KnowledgeItem | null>(null);

  const names: Names = useMemo(
    () => ({
      files: Object.fromEntries((files.data?.items ?? []).map((f) => [f.id, f.name])),
      sources: Object.fromEntries((sources.data?.items ?? []).map((s) => [s.id, s.name])),
    }),
    [files.data, sources.data],
  );
  const items = sortItems(list.data?.items ?? []);
  const proposals = items.filter((i) => i.status === 'proposed').length;
  const filtered = !!(kind || status || search.trim());

  useEffect(() => {
    if (focus && list.data) document.getElementById(`item-${focus}`)?.scrollIntoView({ block: 'center' });
  }, [focus, list.data]);

  const decide = (item: KnowledgeItem, to: 'approved' | 'rejected') =>
    change.mutate(
      { id: item.id, status: to },
      {
        onSuccess: () => toast.success(to === 'approved' ? `Approved “${item.title}”: the agent is given it from the next question.` : `Rejected “${item.title}”.`),
        onError: (e) => toast.error(e.message),
      },
    );
  const actions: ItemActions | null = blocked
    ? null
    : {
        approve: (item) => decide(item, 'approved'),
        reject: (item) => decide(item, 'rejected'),
        editThenApprove: (item) => setEditing({ mode: 'approve', item }),
        edit: (item) => setEditing({ mode: 'edit', item }),
        remove: (item) => setDeleting(item),
      };
  const save = (fields: ItemFields) => {
    if (!editing) return;
    const done = { onSuccess: () => setEditing(null) };
    if (editing.mode === 'add') add.mutate(fields, done);
    else {
      const { kind: _kind, ...rest } = fields;
      change.mutate({ id: editing.item!.id, ...rest, ...(editing.mode === 'approve' ? { status: 'approved' as const } : {}) }, done);
    }
  };
  const saving = editing?.mode === 'add' ? add : change;

  return (
    <section aria-labelledby="knowledge-heading" className="space-y-4" data-testid="knowledge-panel">
      <div className="flex flex-wrap items-center gap-2">
        <h2 id="knowledge-heading" className="flex-1 text-base font-semibold">
          Knowledge
          {proposals > 0 && (
            <span className="ml-2 text-sm font-normal text-amber-700 dark:text-amber-400" data-testid="proposal-count">
              {proposals} waiting for review
            </span>
          )}
        </h2>
        <GuardedButton
          size="sm"
          blockedBecause={blocked}
          onClick={() => {
            add.reset();
            setEditing({ mode: 'add', item: null });
          }}
        >
          <Plus /> Add item
        </GuardedButton>
      </div>
      <div className="flex flex-wrap items-center gap-2">
        <div className="relative min-w-48 flex-1">
          <Search className="pointer-events-none absolute top-1/2 left-2.5 size-4 -translate-y-1/2 text-muted-foreground" />
          <Input aria-label="Search the knowledge" placeholder="Search titles and text" className="pl-8" value={q} onChange={(e) => setQ(e.target.value)} />
        </div>
        <select aria-label="Kind" className={cn(SELECT, 'w-auto')} value={kind} onChange={(e) => setKind(e.target.value as KnowledgeKind | '')}>
          <option value="">Every kind</option>
          {KINDS.map((k) => (
            <option key={k.value} value={k.value}>
              {k.plural}
            </option>
          ))}
        </select>
        <select aria-label="Status" className={cn(SELECT, 'w-auto')} value={status} onChange={(e) => setStatus(e.target.value as KnowledgeStatus | '')}>
          <option value="">Every status</option>
          {STATUSES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      <LoadState query={list} loading="Loading the knowledge…" />
      {list.data && items.length === 0 && (
        <p className="flex items-start gap-3 rounded-lg border border-dashed px-4 py-6 text-sm text-muted-foreground" data-testid="knowledge-empty">
          <BookOpen className="mt-0.5 size-5 shrink-0" />
          <span>{filtered ? 'No item matches these filters.' : EMPTY_TEXT}</span>
        </p>
      )}
      {items.length > 0 && (
        <ul className="divide-y overflow-hidden rounded-lg border bg-card" data-testid="knowledge-list">
          {items.map((item) => (
            <ItemCard key={item.id} item={item} names={names} me={me} actions={actions} highlighted={item.id === focus} />
          ))}
        </ul>
      )}
      {editing && (
        <ItemDialog
          key={`${editing.mode}-${editing.item?.id ?? 'new'}`}
          open
          onOpenChange={(o) => !o && setEditing(null)}
          mode={editing.mode}
          item={editing.item}
          files={files.data?.items ?? []}
          sources={sources.data?.items ?? []}
          onSave={save}
          pending={saving.isPending}
          error={saving.error?.message ?? null}
        />
      )}
      <ConfirmDialog
        open={!!deleting}
        onOpenChange={(o) => !o && setDeleting(null)}
        title="Delete this item?"
        description={`“${deleting?.title ?? ''}” will no longer be given to the agent. The audit log keeps a record of it.`}
        pending={del.isPending}
        onConfirm={() =>
          deleting &&
          del.mutate(deleting.id, {
            onSuccess: () => setDeleting(null),
            onError: (e) => toast.error(e.message),
          })
        }
      />
    </section>
  );
}
