import { useId, useState, type ReactNode } from 'react';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Input, Label, Textarea } from '@/components/ui/input';
import { cleanAppliesTo, KINDS } from './knowledge';
import type { AppliesTo, KnowledgeItem, KnowledgeKind } from './types';

export const SELECT =
  'h-9 w-full cursor-pointer rounded-md border bg-card px-2 text-sm shadow-xs outline-none focus-visible:border-primary focus-visible:ring-2 focus-visible:ring-primary/20 disabled:cursor-not-allowed disabled:opacity-50';

/** What the dialog hands back: the item's fields, applies-to cleaned (null: the whole project). */
export type ItemFields = { kind: KnowledgeKind; title: string; body: string; applies_to: AppliesTo | null };

function Field({ id, label, hint, children }: { id: string; label: string; hint?: string; children: ReactNode }) {
  return (
    <div className="grid min-w-0 gap-1.5">
      <Label htmlFor={id}>{label}</Label>
      {children}
      {hint && <p className="text-xs text-muted-foreground">{hint}</p>}
    </div>
  );
}

/**
 * Adds an item, edits one, or edits a proposal before approving it (`mode`). The kind is chosen
 * when adding only. What it applies to: a file or a source of the project, and a table and column
 * in it; nothing chosen, the whole project.
 */
export function ItemDialog({
  open,
  onOpenChange,
  mode,
  item,
  files,
  sources,
  onSave,
  pending,
  error,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  mode: 'add' | 'edit' | 'approve';
  item?: KnowledgeItem | null;
  files: { id: string; name: string }[];
  sources: { id: string; name: string }[];
  onSave: (fields: ItemFields) => void;
  pending?: boolean;
  error?: string | null;
}) {
  const id = useId();
  const a = item?.applies_to ?? {};
  const [kind, setKind] = useState<KnowledgeKind>(item?.kind ?? 'definition');
  const [title, setTitle] = useState(item?.title ?? '');
  const [body, setBody] = useState(item?.body ?? '');
  const [target, setTarget] = useState(a.file_id ? `file:${a.file_id}` : a.source_id ? `source:${a.source_id}` : '');
  const [table, setTable] = useState(a.table ?? '');
  const [column, setColumn] = useState(a.column ?? '');
  const missing = !title.trim() ? 'Give the item a title.' : !body.trim() ? 'Say what the item means or says.' : null;
  const [tried, setTried] = useState(false);
  const save = () => {
    setTried(true);
    if (missing) return;
    const [what, targetId] = target.split(':');
    onSave({
      kind,
      title: title.trim(),
      body: body.trim(),
      applies_to: cleanAppliesTo({
        file_id: what === 'file' ? targetId : null,
        source_id: what === 'source' ? targetId : null,
        table,
        column,
      }),
    });
  };
  const heading = mode === 'add' ? 'Add to the team’s knowledge' : mode === 'edit' ? 'Edit the item' : 'Edit, then approve';
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="max-w-lg" data-testid="item-dialog">
        <DialogTitle>{heading}</DialogTitle>
        <DialogDescription>
          Approved items are given to the agent with the questions they apply to, marked as the team’s text. Write facts, not orders.
        </DialogDescription>
        <form
          className="grid gap-4"
          onSubmit={(e) => {
            e.preventDefault();
            save();
          }}
        >
          <Field id={`${id}-kind`} label="Kind" hint={KINDS.find((k) => k.value === kind)?.hint}>
            <select
              id={`${id}-kind`}
              className={SELECT}
              value={kind}
              disabled={mode !== 'add'}
              onChange={(e) => setKind(e.target.value as KnowledgeKind)}
            >
              {KINDS.map((k) => (
                <option key={k.value} value={k.value}>
                  {k.label}
                </option>
              ))}
            </select>
          </Field>
          <Field id={`${id}-title`} label="Title">
            <Input id={`${id}-title`} value={title} maxLength={200} placeholder="Active customer" onChange={(e) => setTitle(e.target.value)} />
          </Field>
          <Field id={`${id}-body`} label={kind === 'example' ? 'Question and code' : 'What it means'}>
            <Textarea
              id={`${id}-body`}
              rows={5}
              value={body}
              placeholder="A customer who ordered in the last 90 days."
              onChange={(e) => setBody(e.target.value)}
            />
          </Field>
          <Field id={`${id}-target`} label="Applies to" hint="Nothing chosen: the whole project.">
            <select id={`${id}-target`} className={SELECT} value={target} onChange={(e) => setTarget(e.target.value)}>
              <option value="">The whole project</option>
              {files.length > 0 && (
                <optgroup label="Files">
                  {files.map((f) => (
                    <option key={f.id} value={`file:${f.id}`}>
                      {f.name}
                    </option>
                  ))}
                </optgroup>
              )}
              {sources.length > 0 && (
                <optgroup label="Sources">
                  {sources.map((s) => (
                    <option key={s.id} value={`source:${s.id}`}>
                      {s.name}
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
            <div className="grid grid-cols-2 gap-2">
              <Input aria-label="Table" placeholder="Table or sheet (optional)" value={table} onChange={(e) => setTable(e.target.value)} />
              <Input aria-label="Column" placeholder="Column (optional)" value={column} onChange={(e) => setColumn(e.target.value)} />
            </div>
          </Field>
          <FormError>{(tried && missing) || error || null}</FormError>
          <DialogFooter>
            <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
              Cancel
            </Button>
            <Button type="submit" disabled={pending}>
              {mode === 'add' ? 'Add' : mode === 'edit' ? 'Save' : 'Save and approve'}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
