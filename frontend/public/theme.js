// Applies the saved (or the system's) colour theme before the app draws, so there is no flash.
// A file, not an inline script: the Content-Security-Policy allows no inline script.
(function () {
  // "light" or "dark" is the user's choice; anything else (nothing saved) follows the system.
  var t = localStorage.getItem('wb.theme');
  if (t === 'dark' || (t !== 'light' && window.matchMedia('(prefers-color-scheme: dark)').matches)) document.documentElement.classList.add('dark');
})();
