// Applies the saved (or the system's) colour theme before the app draws, so there is no flash.
// A file, not an inline script: the Content-Security-Policy allows no inline script.
(function () {
  var t = localStorage.getItem('wb.theme');
  if (t === 'dark' || (!t && window.matchMedia('(prefers-color-scheme: dark)').matches)) document.documentElement.classList.add('dark');
})();
