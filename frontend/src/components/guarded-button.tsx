import type * as React from 'react';
import { Button } from '@/components/ui/button';
import { cn } from '@/lib/utils';

/**
 * A button that may be held back: with `blockedBecause` it is disabled and says why on hover. A
 * disabled button takes no pointer events, so the reason also hangs on a wrapper for the tooltip;
 * `place` is the button's place in its row (`ml-auto`), given to the wrapper when there is one.
 */
export function GuardedButton({
  blockedBecause,
  disabled,
  title,
  place,
  className,
  ...props
}: React.ComponentProps<typeof Button> & { blockedBecause?: string | null; place?: string }) {
  if (!blockedBecause) return <Button disabled={disabled} title={title} className={cn(place, className)} {...props} />;
  return (
    <span title={blockedBecause} className={cn('inline-flex cursor-not-allowed', place)} data-blocked>
      <Button disabled title={blockedBecause} className={className} {...props} />
    </span>
  );
}
