import { Check, Copy } from 'lucide-react';
import { useRef, useState } from 'react';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';

/** A value shown this once (a link, a generated password), read-only, with a button that copies it. */
export function CopyField({ value, label, testId }: { value: string; label: string; testId?: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'select' | null>(null);
  const copy = () => {
    input.current?.select();
    if (!navigator.clipboard) return setCopied('select');
    navigator.clipboard.writeText(value).then(
      () => setCopied('yes'),
      () => setCopied('select'),
    );
  };
  return (
    <div className="grid gap-1">
      <div className="flex gap-2">
        <Input
          ref={input}
          readOnly
          aria-label={label}
          value={value}
          className="min-w-0 font-mono text-xs"
          onFocus={(e) => e.currentTarget.select()}
          data-testid={testId}
        />
        <Button type="button" variant="outline" onClick={copy}>
          {copied === 'yes' ? <Check /> : <Copy />} {copied === 'yes' ? 'Copied' : 'Copy'}
        </Button>
      </div>
      {copied === 'select' && <p className="text-xs text-muted-foreground">Press Ctrl+C (⌘C) to copy the selected text.</p>}
    </div>
  );
}
