/**
 * The campaign page's form: show only the selected optimizer's options, the inputs that fit each parameter's
 * type (`data-types`: the types an input applies to; `data-hidden-for`: the types it is hidden for), and a
 * weight only for the outputs chosen as objectives.
 */

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
    const apply = () =>
      row.querySelectorAll<HTMLInputElement>('[data-types]').forEach((i) => {
        i.disabled = !i.dataset.types!.split(' ').includes(sel.value);
        i.hidden = (i.dataset.hiddenFor ?? '').split(' ').includes(sel.value);
      });
    sel.addEventListener('change', apply);
    apply();
  });
  form.querySelectorAll<HTMLInputElement>('input[data-weight]').forEach((w) => {
    const goal = w.closest('tr')!.querySelector('select')!;
    goal.addEventListener('change', () => (w.disabled = goal.value === ''));
  });
  form.querySelectorAll<HTMLInputElement>('input[type=checkbox][name$=".use"]').forEach((cb) => {
    cb.addEventListener('change', () => cb.closest('tr')?.classList.toggle('campaign-off', !cb.checked));
  });
}
