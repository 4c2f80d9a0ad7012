/** A pulsing dot: the run waits for the user. */
export function WaitingDot() {
  return (
    <span className="relative flex size-2 shrink-0">
      <span className="absolute inline-flex size-full animate-ping rounded-full bg-amber-500 opacity-60" />
      <span className="relative inline-flex size-2 rounded-full bg-amber-500" />
    </span>
  );
}
