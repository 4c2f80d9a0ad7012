import { cva, type VariantProps } from 'class-variance-authority';
import type * as React from 'react';
import { cn } from '@/lib/utils';

const badgeVariants = cva('inline-flex items-center gap-1 rounded-full border px-2 py-0.5 text-xs font-medium [&_svg]:size-3', {
  variants: {
    variant: {
      default: 'border-transparent bg-muted text-muted-foreground',
      success: 'border-transparent bg-emerald-500/10 text-emerald-700 dark:text-emerald-400',
      running: 'border-transparent bg-primary/10 text-primary',
      error: 'border-transparent bg-destructive/10 text-destructive',
      warning: 'border-transparent bg-amber-500/10 text-amber-700 dark:text-amber-400',
    },
  },
  defaultVariants: { variant: 'default' },
});

export function Badge({ className, variant, ...props }: React.ComponentProps<'span'> & VariantProps<typeof badgeVariants>) {
  return <span className={cn(badgeVariants({ variant }), className)} {...props} />;
}
