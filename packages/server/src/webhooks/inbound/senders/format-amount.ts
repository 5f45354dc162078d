import currencyCodes from "currency-codes";

/**
 * An amount in a currency's minor unit (as Stripe sends it) as `12.34 EUR`: the number of decimals
 * is the currency's ISO 4217 minor unit (the `currency-codes` list), so zero-decimal currencies
 * show as such (`1234 JPY`) and three-decimal ones with three (`1.234 KWD`). A code the list does
 * not know is shown with two decimals, as Stripe's default. Integer arithmetic: no rounding.
 */
export function formatAmount(minorUnits: number, currency: string): string {
  const code = currency.toUpperCase();
  const digits = currencyCodes.code(code)?.digits ?? 2;
  const sign = minorUnits < 0 ? "-" : "";
  const whole = BigInt(Math.trunc(Math.abs(minorUnits)));
  if (digits === 0) return `${sign}${whole} ${code}`;
  const scale = 10n ** BigInt(digits);
  const fraction = (whole % scale).toString().padStart(digits, "0");
  return `${sign}${whole / scale}.${fraction} ${code}`;
}
