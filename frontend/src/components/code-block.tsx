import { Check, Copy, WrapText } from 'lucide-react';
import { Highlight, themes } from 'prism-react-renderer';
import { useState } from 'react';
import { Button } from '@/components/ui/button';
import { useTheme } from '@/lib/theme';
import { cn } from '@/lib/utils';

export function CopyButton({ text, className, label = 'Copy code' }: { text: string; className?: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      variant="ghost"
      size="icon-sm"
      className={className}
      aria-label={copied ? 'Copied' : label}
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => {
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        });
      }}
    >
      {copied ? <Check /> : <Copy />}
    </Button>
  );
}

/** Past this many characters a line is long: the block offers to wrap or unwrap its lines. */
export const LONG_LINE = 80;

/**
 * Code shown read-only, highlighted. Long lines wrap by default, so nothing hides past the right
 * edge on any screen; a toggle unwraps them into one scrolling block, whose scrollbar always shows.
 */
export function CodeBlock({ code, language = 'python', className }: { code: string; language?: string; className?: string }) {
  const theme = useTheme();
  const [wrap, setWrap] = useState(true);
  const long = code.split('\n').some((line) => line.length > LONG_LINE);
  return (
    <div className={cn('group relative rounded-lg border bg-code', className)}>
      <div className="absolute top-1.5 right-1.5 z-10 flex gap-0.5">
        {long && (
          <Button
            variant="ghost"
            size="icon-sm"
            className={cn('bg-card/80', !wrap && 'text-muted-foreground')}
            aria-label={wrap ? 'Show long lines unwrapped' : 'Wrap long lines'}
            aria-pressed={wrap}
            title={wrap ? 'Long lines wrap: click to scroll them instead' : 'Long lines scroll: click to wrap them'}
            onClick={() => setWrap((w) => !w)}
          >
            <WrapText />
          </Button>
        )}
        <CopyButton text={code} className="bg-card/80" />
      </div>
      <Highlight code={code.replace(/\n$/, '')} language={language} theme={theme === 'dark' ? themes.vsDark : themes.github}>
        {({ tokens, getLineProps, getTokenProps }) => (
          <pre
            className={cn(
              'p-3 font-mono text-[13px] leading-relaxed [tab-size:4]',
              wrap ? 'whitespace-pre-wrap [overflow-wrap:anywhere]' : 'code-scroll overflow-x-scroll whitespace-pre',
            )}
            style={{ background: 'transparent' }}
            data-testid="code"
            data-wrap={wrap ? 'wrap' : 'scroll'}
          >
            {/* Room for the buttons beside the first lines only: the lines below use the whole width. */}
            <span aria-hidden className={cn('float-right h-6', long ? 'w-16' : 'w-7', !wrap && 'sticky right-0')} />
            {tokens.map((line, i) => (
              <div key={i} {...getLineProps({ line })}>
                {line.map((token, key) => (
                  <span key={key} {...getTokenProps({ token })} />
                ))}
              </div>
            ))}
          </pre>
        )}
      </Highlight>
    </div>
  );
}
