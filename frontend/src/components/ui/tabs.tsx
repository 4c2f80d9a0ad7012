import { cn } from '@/lib/utils';

/** A row of small tabs (a tablist): one of `items` is current. */
export function Tabs<T extends string>({
  label,
  items,
  current,
  onSelect,
  className,
}: {
  label: string;
  items: { value: T; text: string }[];
  current: T;
  onSelect: (value: T) => void;
  className?: string;
}) {
  return (
    <div role="tablist" aria-label={label} className={cn('flex min-w-0 items-center gap-1 overflow-x-auto', className)}>
      {items.map((item) => (
        <button
          key={item.value}
          type="button"
          role="tab"
          aria-selected={item.value === current}
          onClick={() => onSelect(item.value)}
          className={cn(
            'shrink-0 cursor-pointer rounded-md px-2.5 py-1 text-xs font-medium whitespace-nowrap transition-colors',
            item.value === current ? 'bg-primary/10 text-primary' : 'text-muted-foreground hover:bg-muted hover:text-foreground',
          )}
        >
          {item.text}
        </button>
      ))}
    </div>
  );
}
