/** The campaign page's form: show only the selected optimizer's options, and the inputs that fit each parameter's type. */

export function initCampaignForm() {
  document.querySelectorAll<HTMLSelectElement>('select[data-autosubmit]').forEach((s) => s.addEventListener('change', () => s.form?.requestSubmit()));
  const form = document.getElementById('campaign-form') as HTMLFormElement | null;
  if (!form) return;
  const opt = document.getElementById('campaign-optimizer') as HTMLSelectElement | null;
  const showOptimizer = () =>
    form.querySelectorAll<HTMLFieldSetElement>('fieldset[data-optimizer]').forEach((f) => {
      const on = f.dataset.optimizer === opt?.value;
      f.hidden = !on;
      f.disabled = !on;
    });
  opt?.addEventListener('change', showOptimizer);
  showOptimizer(); // the browser may have restored another selection (back button)
  form.querySelectorAll<HTMLSelectElement>('select[data-param-type]').forEach((sel) => {
    const row = sel.closest('tr')!;
    const apply = () => row.querySelectorAll<HTMLInputElement>('[data-bound]').forEach((i) => (i.disabled = (i.dataset.bound === 'choices') !== (sel.value === 'choice')));
    sel.addEventListener('change', apply);
    apply();
  });
  form.querySelectorAll<HTMLInputElement>('input[type=checkbox][name$=".use"]').forEach((cb) => {
    cb.addEventListener('change', () => cb.closest('tr')?.classList.toggle('campaign-off', !cb.checked));
  });
}
