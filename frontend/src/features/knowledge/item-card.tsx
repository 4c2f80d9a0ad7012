import { AlertTriangle, Check, Pencil, Trash2, X } from 'lucide-react';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { cn, formatDate } from '@/lib/utils';
import { appliesToText, kindLabel, personOf, warningsOf, type Names } from './knowledge';
import type { KnowledgeItem } from './types';

export type ItemActions = {
  approve: (item: KnowledgeItem) => void;
  editThenApprove: (item: KnowledgeItem) => void;
  reject: (item: KnowledgeItem) => void;
  edit: (item: KnowledgeItem) => void;
  remove: (item: KnowledgeItem) => void;
};

function StatusBadge({ status }: { status: KnowledgeItem['status'] }) {
  if (status === 'proposed') return <Badge variant="warning">Proposed</Badge>;
  if (status === 'rejected') return <Badge variant="error">Rejected</Badge>;
  return <Badge variant="success">Approved</Badge>;
}

/** "Written by ana@… on 3 Nov · approved by you on 4 Nov": who wrote it (the agent, for a proposal from a run) and who approved it. */
export function provenance(item: KnowledgeItem, me?: string | null): string {
  const wrote = personOf(item.created_by, item.created_by_email, me) ?? (item.source_run_id ? 'the agent' : null);
  const parts = [`${item.status === 'proposed' ? 'Proposed' : 'Written'}${wrote ? ` by ${wrote}` : ''} on ${formatDate(item.created_at)}`];
  if (item.status === 'approved' && item.approved_at) {
    const who = personOf(item.approved_by, item.approved_by_email, me);
    parts.push(`approved${who ? ` by ${who}` : ''} on ${formatDate(item.approved_at)}`);
  }
  return parts.join(' · ');
}

/**
 * One item: its kind, title, body (as text, never HTML: it is the team's or the agent's words),
 * what it applies to, who wrote and approved it, and its warnings. Editors get its actions:
 * a proposal's Approve / Edit then approve / Reject first; any item's Edit and Delete.
 */
export function ItemCard({
  item,
  names,
  me,
  actions,
  highlighted,
}: {
  item: KnowledgeItem;
  names: Names;
  me?: string | null;
  /** Null for a viewer: the item reads without buttons. */
  actions: ItemActions | null;
  highlighted?: boolean;
}) {
  const warnings = warningsOf(item);
  return (
    <li
      id={`item-${item.id}`}
      className={cn('space-y-2 px-4 py-3', item.status === 'proposed' && 'bg-amber-500/5', highlighted && 'ring-2 ring-primary ring-inset')}
      data-testid="knowledge-item"
      data-item-id={item.id}
      data-status={item.status}
      data-kind={item.kind}
    >
      <div className="flex flex-wrap items-center gap-2">
        <Badge>{kindLabel(item.kind)}</Badge>
        <h3 className="min-w-0 flex-1 text-sm font-semibold break-words" data-testid="item-title">
          {item.title}
        </h3>
        <StatusBadge status={item.status} />
      </div>
      {warnings.map((w) => (
        <p key={w} role="alert" className="flex items-start gap-2 rounded-md bg-amber-500/10 px-2 py-1.5 text-xs text-amber-800 dark:text-amber-300" data-testid="item-warning">
          <AlertTriangle className="mt-0.5 size-3.5 shrink-0" /> {w}
        </p>
      ))}
      <p className={cn('text-sm break-words whitespace-pre-wrap', item.kind === 'example' && 'font-mono text-[13px]')} data-testid="item-body">
        {item.body}
      </p>
      <p className="text-xs text-muted-foreground">
        <span data-testid="item-applies">Applies to {appliesToText(item.applies_to, names)}</span> · <span>{provenance(item, me)}</span>
      </p>
      {actions && (
        <div className="flex flex-wrap items-center gap-1.5">
          {item.status === 'proposed' && (
            <>
              <Button size="sm" onClick={() => actions.approve(item)}>
                <Check /> Approve
              </Button>
              <Button size="sm" variant="outline" onClick={() => actions.editThenApprove(item)}>
                <Pencil /> Edit then approve
              </Button>
              <Button size="sm" variant="outline" onClick={() => actions.reject(item)}>
                <X /> Reject
              </Button>
            </>
          )}
          {item.status !== 'proposed' && (
            <Button size="sm" variant="ghost" onClick={() => actions.edit(item)}>
              <Pencil /> Edit
            </Button>
          )}
          <Button size="sm" variant="ghost" className="ml-auto text-muted-foreground" onClick={() => actions.remove(item)} aria-label={`Delete ${item.title}`}>
            <Trash2 /> Delete
          </Button>
        </div>
      )}
    </li>
  );
}
