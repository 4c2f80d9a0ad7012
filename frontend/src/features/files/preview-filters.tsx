import { useState } from 'react';
import { Filter, X } from 'lucide-react';
import type { FilterCondition, PreviewColumn } from '@/client';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { columnType } from './preview-table';

type Op = FilterCondition['op'];

/** The conditions offered for a column, by its type: "contains" for text, ranges for numbers and dates. */
export function opsFor(column: PreviewColumn): { op: Op; text: string }[] {
  const type = columnType(column);
  const empty = [
    { op: 'empty' as const, text: 'is empty' },
    { op: 'not_empty' as const, text: 'is not empty' },
  ];
  if (type === 'yes/no')
    return [{ op: 'eq', text: 'is' }, { op: 'ne', text: 'is not' }, ...empty];
  const equal = [
    { op: 'eq' as const, text: '=' },
    { op: 'ne' as const, text: '≠' },
  ];
  if (type === 'text') return [{ op: 'contains', text: 'contains' }, ...equal, ...empty];
  const range = [
    { op: 'gt' as const, text: '>' },
    { op: 'ge' as const, text: '≥' },
    { op: 'lt' as const, text: '<' },
    { op: 'le' as const, text: '≤' },
  ];
  return [...range, ...equal, ...empty];
}

const OP_TEXT: Record<Op, string> = {
  eq: '=',
  ne: '≠',
  contains: 'contains',
  gt: '>',
  ge: '≥',
  lt: '<',
  le: '≤',
  empty: 'is empty',
  not_empty: 'is not empty',
};

/** A condition in a few words, as its chip shows it: "Amount > 10000", "Region contains north". */
export function describeCondition(c: FilterCondition): string {
  if (c.op === 'empty' || c.op === 'not_empty') return `${c.column} ${OP_TEXT[c.op]}`;
  const value = typeof c.value === 'boolean' ? (c.value ? 'yes' : 'no') : String(c.value);
  return `${c.column} ${OP_TEXT[c.op]} ${c.op === 'contains' ? `“${value}”` : value}`;
}

/** The value as the server reads it: numbers as numbers (the server also reads "€1,200"), yes/no as booleans. */
function typedValue(column: PreviewColumn, text: string): string | number | boolean {
  const type = columnType(column);
  if (type === 'yes/no') return text === 'yes';
  if (type === 'number' && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text.trim());
  return text.trim();
}

/**
 * The condition menu of one column: an operator and a value; "Apply" adds it to the filter, which the
 * server applies to every row of the file.
 */
export function ConditionForm({
  column,
  onApply,
  onCancel,
}: {
  column: PreviewColumn;
  onApply: (condition: FilterCondition) => void;
  onCancel: () => void;
}) {
  const ops = opsFor(column);
  const [op, setOp] = useState<Op>(ops[0].op);
  const type = columnType(column);
  const [value, setValue] = useState(type === 'yes/no' ? 'yes' : '');
  const needsValue = op !== 'empty' && op !== 'not_empty';
  const apply = () => {
    if (needsValue && !value.trim()) return;
    onApply(needsValue ? { column: column.name, op, value: typedValue(column, value) } : { column: column.name, op });
  };
  return (
    <form
      className="flex flex-wrap items-center gap-2 border-t bg-muted/40 px-3 py-2 text-xs"
      data-testid="condition-form"
      onSubmit={(e) => {
        e.preventDefault();
        apply();
      }}
    >
      <span className="max-w-48 truncate font-medium" title={column.name}>
        {column.name}
      </span>
      <select
        aria-label={`Condition on ${column.name}`}
        className="rounded border bg-background px-1.5 py-1 text-xs text-foreground"
        value={op}
        onChange={(e) => setOp(e.target.value as Op)}
      >
        {ops.map((o) => (
          <option key={o.op} value={o.op}>
            {o.text}
          </option>
        ))}
      </select>
      {needsValue &&
        (type === 'yes/no' ? (
          <select
            aria-label={`Value for ${column.name}`}
            className="rounded border bg-background px-1.5 py-1 text-xs text-foreground"
            value={value}
            onChange={(e) => setValue(e.target.value)}
          >
            <option value="yes">yes</option>
            <option value="no">no</option>
          </select>
        ) : (
          <Input
            aria-label={`Value for ${column.name}`}
            className="h-7 w-40 text-xs"
            type={type === 'date' ? 'date' : 'text'}
            inputMode={type === 'number' ? 'decimal' : undefined}
            placeholder={type === 'number' ? 'a number' : type === 'date' ? 'a date' : 'text'}
            value={value}
            autoFocus
            onChange={(e) => setValue(e.target.value)}
          />
        ))}
      <Button type="submit" size="sm" className="h-7" disabled={needsValue && !value.trim()}>
        Apply
      </Button>
      <Button type="button" variant="ghost" size="sm" className="h-7" onClick={onCancel}>
        Cancel
      </Button>
    </form>
  );
}

/** The active filter as chips, each clearable, and how many rows of the file match. */
export function FilterChips({
  conditions,
  matching,
  total,
  onRemove,
  onClear,
}: {
  conditions: FilterCondition[];
  matching: number;
  total: number;
  onRemove: (index: number) => void;
  onClear: () => void;
}) {
  if (!conditions.length) return null;
  return (
    <div className="flex flex-wrap items-center gap-1.5 border-t px-3 py-1.5 text-xs" data-testid="filter-chips">
      <Filter className="size-3.5 text-muted-foreground" aria-hidden />
      {conditions.map((c, i) => (
        <span
          key={`${i}-${c.column}-${c.op}`}
          className="inline-flex max-w-full items-center gap-1 rounded-full border bg-primary/10 py-0.5 pr-1 pl-2 text-foreground"
          data-testid="filter-chip"
        >
          <span className="truncate">{describeCondition(c)}</span>
          <button
            type="button"
            className="cursor-pointer rounded-full p-0.5 hover:bg-primary/20"
            aria-label={`Remove filter ${describeCondition(c)}`}
            onClick={() => onRemove(i)}
          >
            <X className="size-3" />
          </button>
        </span>
      ))}
      <button type="button" className="cursor-pointer text-muted-foreground underline underline-offset-2 hover:text-foreground" onClick={onClear}>
        Clear all
      </button>
      <span className="ml-auto text-muted-foreground" data-testid="filter-count">
        {matching.toLocaleString()} of {total.toLocaleString()} rows match
      </span>
    </div>
  );
}
