#!/usr/bin/env python3
"""Numeric test oracles for the dpbandit `privacy` package (and `counting`).

This is the mpmath oracle script of docs/accountant.md: it writes every row
of the oracle tables T1-T9 and the accountant rows of docs/reproductions.md
§3.0 and docs/linear.md §1.11 as JSON:

    python3 privacy/testdata/oracles.py > privacy/testdata/oracles.json

Working precision is 60 digits (30 for the 2^20-term T8 sum, as in the
Appendix). Every number is written as the float64 nearest to the mpmath value.
Requires mpmath (tested with 1.3.0). Runtime: about 10 CPU-minutes (24 wall
minutes on a busy 2-core machine); the 60-digit quadratures of the fractional
T6 orders and the SGM calibrations dominate. Progress goes to stderr.
"""
import json
import sys

import mpmath as mp

mp.mp.dps = 60
Phi = mp.ncdf
LOG = mp.log


# ---------------- Gaussian DP (Dong-Roth-Su) / analytic Gaussian (Balle-Wang) --------
def gdp_delta(eps, mu):
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    return Phi(-eps/mu + mu/2) - mp.e**eps * Phi(-eps/mu - mu/2)


def bisect(f, lo, hi, iters=400):
    """f(lo) > 0 >= f(hi) (decreasing) -- returns the crossing point."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    for _ in range(iters):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def gdp_eps(delta, mu):
    """smallest eps >= 0 with delta(eps) <= delta; solved on log scale."""
    delta = mp.mpf(delta)
    if gdp_delta(0, mu) <= delta:
        return mp.mpf(0)
    hi = mp.mpf(1)
    while gdp_delta(hi, mu) > delta:
        hi *= 2
    return bisect(lambda e: LOG(gdp_delta(e, mu)) - LOG(delta), 0, hi)


def gdp_mu(eps, delta):
    """largest mu with delta(eps; mu) <= delta  (delta increasing in mu)."""
    delta = mp.mpf(delta)
    hi = mp.mpf(1)
    while gdp_delta(eps, hi) < delta:
        hi *= 2
    return bisect(lambda m: LOG(delta) - LOG(gdp_delta(eps, m)), mp.mpf('1e-30'), hi)


# ---------------- zCDP (Bun-Steinke 2016; Canonne-Kamath-Steinke 2020) ----------------
def bs_eps(rho, delta):                       # BS16 Prop 1.3
    rho, L = mp.mpf(rho), LOG(1/mp.mpf(delta))
    return rho + 2*mp.sqrt(rho*L)


def bs_rho(eps, delta):                       # inverse of bs_eps
    eps, L = mp.mpf(eps), LOG(1/mp.mpf(delta))
    return (mp.sqrt(eps + L) - mp.sqrt(L))**2


def cks_delta(rho, eps):
    """CKS20 Prop.12/Cor.13: delta = inf_{a>1} exp((a-1)(a rho-eps) + a log(1-1/a))/(a-1)."""
    rho, eps = mp.mpf(rho), mp.mpf(eps)
    if rho == 0:
        return mp.mpf(0)
    g = lambda a: (2*a - 1)*rho - eps + LOG(1 - 1/a)   # d/da log(delta(a)), increasing
    lo, hi = mp.mpf(1) + mp.mpf('1e-40'), (eps + 1)/(2*rho) + 2
    for _ in range(400):
        mid = (lo + hi)/2
        if g(mid) < 0:
            lo = mid
        else:
            hi = mid
    a = (lo + hi)/2
    d = mp.e**((a - 1)*(a*rho - eps) + a*LOG(1 - 1/a)) / (a - 1)
    return min(d, mp.mpf(1)), a


def cks_eps(rho, delta):
    delta = mp.mpf(delta)
    return bisect(lambda e: LOG(cks_delta(rho, e)[0]) - LOG(delta), 0, bs_eps(rho, delta) + 1)


def cks_rho(eps, delta):
    delta = mp.mpf(delta)
    return bisect(lambda r: LOG(delta) - LOG(cks_delta(r, eps)[0]), mp.mpf('1e-30'), mp.mpf(eps) + 1)


# ---------------- Poisson-subsampled Gaussian RDP (Mironov-Talwar-Zhang 2019) ---------
def sgm_logA_int(q, sigma, alpha):
    """log A_alpha, integer alpha: sum_k C(a,k) (1-q)^(a-k) q^k exp((k^2-k)/(2 sigma^2))."""
    q, s2 = mp.mpf(q), mp.mpf(sigma)**2
    return LOG(mp.fsum(mp.binomial(alpha, k) * (1 - q)**(alpha - k) * q**k
                       * mp.e**((k*k - k)/(2*s2)) for k in range(alpha + 1)))


def sgm_logA_quad(q, sigma, alpha):
    """Independent check, any real alpha>1: A = E_{z~N(0,s^2)}[((1-q) + q e^{(2z-1)/(2s^2)})^alpha]."""
    q, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)
    f = lambda z: mp.npdf(z, 0, s) * ((1 - q) + q*mp.e**((2*z - 1)/(2*s*s)))**a
    pts = [-mp.inf, -10*s, 0, mp.mpf(1)/2, a/2, a, a + 10*s, 2*a + 20*s, mp.inf]
    pts = sorted(set(pts))
    return LOG(mp.quad(f, pts))


def sgm_rdp(q, sigma, alpha, use_quad=False):
    if q == 1:
        return mp.mpf(alpha)/(2*mp.mpf(sigma)**2)
    la = sgm_logA_quad(q, sigma, alpha) if use_quad else sgm_logA_int(q, sigma, alpha)
    return la/(alpha - 1)


def rdp_to_eps_classic(orders, rdp, delta):       # Mironov 2017 Prop.3
    L = LOG(1/mp.mpf(delta))
    return min((r + L/(a - 1), a) for a, r in zip(orders, rdp))


def rdp_to_eps_improved(orders, rdp, delta):      # CKS20 Prop.12 == BBGHS20 Thm 21 form
    d = mp.mpf(delta)
    return min((r + LOG(1 - mp.mpf(1)/a) - LOG(d*a)/(a - 1), a) for a, r in zip(orders, rdp))


INT_ORDERS = list(range(2, 65)) + [128, 256, 512, 1024]
DEFAULT_ORDERS = [(10 + x)//10 if x % 10 == 0 else 1 + mp.mpf(x)/10 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]


# ---------------- Laplace RDP (Mironov 2017 Prop.6) ---------------------------------
def laplace_rdp(eps_l, a):   # b = Delta/eps_l
    e, a = mp.mpf(eps_l), mp.mpf(a)
    return LOG(a/(2*a - 1)*mp.e**((a - 1)*e) + (a - 1)/(2*a - 1)*mp.e**(-a*e))/(a - 1)


def pure_to_rdp(eps, a):     # tight RDP of an eps-DP mechanism (randomized response)
    e, a = mp.mpf(eps), mp.mpf(a)
    return (LOG(mp.e**(a*e) + mp.e**((1 - a)*e)) - LOG(1 + mp.e**e))/(a - 1)


def tree_online_gls_var(T, t):
    """Honaker-style BLUE of prefix sum [1,t] from all dyadic nodes completed by time t (unit node variance)."""
    nodes, size = [], 1
    while size <= T:
        nodes += [(a, a + size) for a in range(0, T, size) if a + size <= t]
        size *= 2
    M = mp.zeros(t, t)
    for (a, b) in nodes:
        for i in range(a, b):
            for j in range(a, b):
                M[i, j] += 1
    Minv = mp.inverse(M)
    return mp.fsum(Minv[i, j] for i in range(t) for j in range(t))


# ---------------- additions for the JSON oracles ------------------------------------
def sgm_eps_single(q, sigma, orders, delta, conv):
    """one-step epsilon of the subsampled Gaussian on `orders` with conversion conv."""
    rdp = [sgm_rdp(q, sigma, a) for a in orders]
    return conv(orders, rdp, delta)


def sigma_amp(eps, q, delta, orders):
    """SPEC §1.11: smallest sigma with min_a RDP(a; q, sigma) + ln(1/delta)/(a-1) <= eps."""
    eps, q = mp.mpf(eps), mp.mpf(q)
    f = lambda s: sgm_eps_single(q, s, orders, delta, rdp_to_eps_classic)[0] - eps  # decreasing in sigma
    lo, hi = mp.mpf('0.05'), mp.mpf(1)
    while f(hi) > 0:
        hi *= 2
    return bisect(f, lo, hi, iters=200)


def sgm_sigma_T(q, steps, eps, delta, orders, conv):
    """smallest sigma whose `steps`-fold composed RDP converts (with conv) to <= eps."""
    q, eps = mp.mpf(q), mp.mpf(eps)

    def f(s):
        rdp = [steps*sgm_rdp(q, s, a) for a in orders]
        return conv(orders, rdp, delta)[0] - eps
    lo, hi = mp.mpf('0.1'), mp.mpf(1)
    while f(hi) > 0:
        hi *= 2
    return bisect(f, lo, hi, iters=200)


def F(x):
    """float64 nearest to an mpf (JSON number)."""
    return float(mp.mpf(x))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def build():
    out = {"generator": "privacy/testdata/oracles.py (the oracles of docs/accountant.md, as JSON)",
           "mpmath": mp.__version__, "dps": 60}

    log('T1')
    out["T1"] = [{"mu": F(mu), "eps": F(eps), "delta": F(gdp_delta(eps, mu)),
                  "log_delta": F(LOG(gdp_delta(eps, mu)))}
                 for mu in ['0.5', '1', '2', '5', '10'] for eps in ['0', '0.5', '1', '2', '5', '10']]

    log('T2')
    t2 = []
    mus = [('0.5', mp.mpf('0.5')), ('1', mp.mpf(1)), ('2', mp.mpf(2)), ('5', mp.mpf(5)), ('10', mp.mpf(10)),
           ('sqrt(500)', mp.sqrt(500)), ('sqrt(1e5/2)', mp.sqrt(mp.mpf(10)**5/2)), ('651', mp.mpf(651))]
    for name, mu in mus:
        for delta in ['1e-5', '1e-6']:
            t2.append({"mu_expr": name, "mu": F(mu), "delta": F(delta), "eps": F(gdp_eps(delta, mu))})
    for name, mu, delta in [('1', mp.mpf(1), '1e-300'), ('40', mp.mpf(40), '1e-5'), ('100', mp.mpf(100), '1e-5')]:
        t2.append({"mu_expr": name, "mu": F(mu), "delta": F(delta), "eps": F(gdp_eps(delta, mu)), "stress": True})
    out["T2"] = t2

    log('T3')
    t3 = []
    for eps, delta in [('0.1', '1e-5'), ('0.5', '1e-5'), ('1', '1e-5'), ('1', '1e-6'), ('2', '1e-5'), ('8', '1e-5')]:
        mu = gdp_mu(eps, delta)
        classic = mp.sqrt(2*LOG(mp.mpf('1.25')/mp.mpf(delta)))/mp.mpf(eps)
        t3.append({"eps": F(eps), "delta": F(delta), "mu": F(mu), "sigma_min": F(1/mu), "classic_sigma": F(classic)})
    out["T3"] = t3

    log('T4')
    rho_rows = []
    for eps, delta in [('1', '1e-5'), ('1', '1e-6'), ('0.5', '1e-5'), ('8', '1e-5')]:
        rho_rows.append({"eps": F(eps), "delta": F(delta), "rho_bs": F(bs_rho(eps, delta)),
                         "rho_cks": F(cks_rho(eps, delta)), "rho_gaussian": F(gdp_mu(eps, delta)**2/2)})
    eps_rows = []
    for rho, delta in [('0.5', '1e-5'), ('0.5', '1e-6'), ('0.05', '1e-5'), ('2', '1e-5')]:
        eps_rows.append({"rho": F(rho), "delta": F(delta), "eps_bs": F(bs_eps(rho, delta)),
                         "eps_cks": F(cks_eps(rho, delta)),
                         "eps_gaussian": F(gdp_eps(delta, mp.sqrt(2*mp.mpf(rho))))})
    d, a = cks_delta('0.025', '1')
    out["T4"] = {"rho_from_eps_delta": rho_rows, "eps_from_rho_delta": eps_rows,
                 "cks_delta": [{"rho": 0.025, "eps": 1.0, "delta": F(d), "alpha": F(a)}],
                 "cks_eps": [{"rho": 0.025, "delta": 1e-6, "eps": F(cks_eps('0.025', '1e-6'))}]}

    log('T5')
    configs = [('0.01', '1.1'), ('0.3', '2'), ('1', '1')]
    t5 = []
    for q, s in configs:
        for a in [2, 8, 32]:
            r = sgm_rdp(mp.mpf(q), s, a)
            if q != '1':
                chk = sgm_rdp(mp.mpf(q), s, a, use_quad=True)
                assert abs(chk - r)/r < mp.mpf('1e-40'), (q, s, a)
            t5.append({"q": F(q), "sigma": F(s), "alpha": a, "rdp": F(r), "method": "exact-sum"})
        for a in ['1.5', '2.5']:
            if q != '1':
                r = sgm_rdp(mp.mpf(q), s, mp.mpf(a), use_quad=True)
                meth = "quadrature"
            else:
                r = mp.mpf(a)/(2*mp.mpf(s)**2)
                meth = "closed-form"
            t5.append({"q": F(q), "sigma": F(s), "alpha": F(a), "rdp": F(r), "method": meth})
    out["T5"] = t5

    log('T6')
    t6 = []
    for q, s in configs:
        single = {}
        for name, orders in [('INT', INT_ORDERS), ('DEFAULT', DEFAULT_ORDERS)]:
            per = [sgm_rdp(mp.mpf(q), s, a, use_quad=(q != '1' and not isinstance(a, int))) for a in orders]
            rdp = [1000*r for r in per]
            ec, ac = rdp_to_eps_classic(orders, rdp, '1e-5')
            ei, ai = rdp_to_eps_improved(orders, rdp, '1e-5')
            t6.append({"q": F(q), "sigma": F(s), "steps": 1000, "delta": 1e-5, "grid": name,
                       "eps_classic": F(ec), "alpha_classic": F(ac),
                       "eps_improved": F(ei), "alpha_improved": F(ai),
                       "orders": [F(a) for a in orders], "rdp_one_step": [F(r) for r in per]})
            log(f'  T6 {q} {s} {name}')
    clt = []
    for q, s in configs[:2]:
        q_, s_ = mp.mpf(q), mp.mpf(s)
        mu = q_*mp.sqrt(1000*(mp.e**(1/s_**2) - 1))
        clt.append({"q": F(q), "sigma": F(s), "steps": 1000, "mu": F(mu), "eps": F(gdp_eps('1e-5', mu))})
    out["T6"] = {"rows": t6, "exact_q1_sigma1": F(gdp_eps('1e-5', mp.sqrt(1000))), "clt": clt}

    log('T7')
    out["T7"] = [{"eps_l": F(e), "alpha": a, "laplace_rdp": F(laplace_rdp(e, a)), "pure_rdp": F(pure_to_rdp(e, a))}
                 for e in ['0.1', '1'] for a in [2, 8, 32]]

    log('T9')
    t9 = []
    for k in [3, 4, 5]:
        T = 2**k
        g = [tree_online_gls_var(T, t) for t in range(1, T + 1)]
        pop = [bin(t).count('1') for t in range(1, T + 1)]
        t9.append({"T": T, "plain_max": max(pop), "plain_mean": F(mp.mpf(sum(pop))/T),
                   "gls_max": F(max(g)), "gls_mean": F(mp.fsum(g)/T), "gls_var": [F(x) for x in g],
                   "plain_var": pop})
    out["T9"] = t9

    # ---- docs/reproductions.md §3.0; docs/linear.md §1.11 ([ADA]) (accountant rows) ----
    log('SPEC')
    spec = {}
    spec["gdp_eps"] = [{"eta": F(eta), "delta": F(d), "eps": F(gdp_eps(d, eta))}
                       for eta in [1, 2, 5, 10] for d in ['1e-6', '1e-5']]
    T = 1000
    spec["fig4"] = [{"T": T, "eta": F(mp.sqrt(mp.mpf(T)/2)), "delta": F(d),
                     "gdp_eps": F(gdp_eps(d, mp.sqrt(mp.mpf(T)/2))),
                     "rdp_eps": F(mp.mpf(T)/4 + mp.sqrt(T*LOG(1/mp.mpf(d))))}
                    for d in ['1e-2', '1e-6']]
    spec["fig1"] = [{"T": T, "cb1": cb1, "eta": F(mp.sqrt(mp.mpf(T)/cb1)), "delta": F(d),
                     "eps": F(gdp_eps(d, mp.sqrt(mp.mpf(T)/cb1)))}
                    for cb1 in [1, 2, 11, 101] for d in ['1e-2', '1e-4', '1e-6']]
    spec["adaprivate"] = []
    for e in ['0.5', '1', '2', '5', '10']:
        rb, rc = bs_rho(e, '1e-5'), cks_rho(e, '1e-5')
        spec["adaprivate"].append({"eps": F(e), "delta": 1e-5, "rho_bs": F(rb), "sigma_bs": F(1/mp.sqrt(2*rb)),
                                   "rho_cks": F(rc), "sigma_cks": F(1/mp.sqrt(2*rc))})
    amp_orders = [2, 3, 4, 5, 6, 8, 16, 32, 64]
    spec["sigma_amp"] = {"orders": amp_orders, "delta": 1e-5, "conversion": "classic", "rows": []}
    for e in ['0.5', '1', '5']:
        for q in ['0.1', '0.3', '0.5', '0.7']:
            s = sigma_amp(e, q, '1e-5', amp_orders)
            spec["sigma_amp"]["rows"].append({"eps": F(e), "q": F(q), "sigma": F(s), "sigma_3dp": round(F(s), 3)})
            log(f'  sigma_amp {e} {q} {mp.nstr(s, 8)}')
    out["SPEC"] = spec

    # ---- extra SGM checks: integer orders up to 1024, fractional by quadrature, calibration ----
    log('SGM extra')
    extra = []
    for q, s in [('0.001', '0.8'), ('0.05', '5'), ('0.5', '1'), ('0.9', '3'), ('0.01', '1.1'), ('0.3', '2')]:
        for a in [2, 3, 10, 64, 256, 1024]:
            extra.append({"q": F(q), "sigma": F(s), "alpha": a, "rdp": F(sgm_rdp(mp.mpf(q), s, a)), "method": "exact-sum"})
        for a in ['1.01', '1.1', '1.25', '3.7', '7.5']:
            r = sgm_rdp(mp.mpf(q), s, mp.mpf(a), use_quad=True)
            extra.append({"q": F(q), "sigma": F(s), "alpha": F(a), "rdp": F(r), "method": "quadrature"})
    # quadrature sanity check on an integer order in every config
    for q, s in [('0.001', '0.8'), ('0.05', '5'), ('0.5', '1'), ('0.9', '3')]:
        r, chk = sgm_rdp(mp.mpf(q), s, 7), sgm_rdp(mp.mpf(q), s, 7, use_quad=True)
        assert abs(chk - r)/r < mp.mpf('1e-30'), (q, s)
    calib = []
    for q, steps, e in [('0.01', 1000, '1'), ('0.01', 1000, '1.72529081804495'), ('0.3', 1000, '35.3676664555464'),
                        ('0.05', 100, '0.5'), ('1', 10, '3')]:
        s = sgm_sigma_T(q, steps, e, '1e-5', INT_ORDERS, rdp_to_eps_improved)
        calib.append({"q": F(q), "steps": steps, "eps": F(e), "delta": 1e-5, "grid": "INT",
                      "conversion": "improved", "sigma": F(s)})
        log(f'  calib {q} {steps} {e} {mp.nstr(s, 12)}')
    out["SGM_extra"] = {"rdp": extra, "calibration": calib}

    log('T8')
    t8 = {}
    T = 2**20
    L = T.bit_length()                     # floor(log2 T)+1 = levels touched by one leaf
    maxpop = max(bin(t).count('1') for t in range(1, T + 1))
    sumpop = sum(bin(t).count('1') for t in range(1, T + 1))
    t8.update({"T": T, "levels": L, "laplace_b_eps1": L, "laplace_node_var_eps1": 2*L*L,
               "max_popcount": maxpop, "mean_popcount": F(mp.mpf(sumpop)/T),
               "laplace_prefix_var_max_eps1": maxpop*2*L*L,
               "laplace_prefix_var_mean_eps1": F(mp.mpf(sumpop)/T*2*L*L),
               "gaussian_max_prefix_var_times_rho": F(mp.mpf(maxpop*L)/2)})
    mp.mp.dps = 30
    c, s2 = mp.mpf(1), mp.mpf(0)
    for k in range(T):
        if k > 0:
            c *= mp.mpf(2*k - 1)/(2*k)
        s2 += c*c
    t8.update({"sqrt_factorisation_sum_ck2": F(s2), "sqrt_factorisation_max_var_times_rho": F(s2*s2/2),
               "sqrt_factorisation_asymptotic": F((LOG(T) + mp.euler + 4*LOG(2))/mp.pi),
               "sum_precision_digits": 30})
    mp.mp.dps = 60
    out["T8"] = t8
    return out


if __name__ == '__main__':
    json.dump(build(), sys.stdout, indent=1)
    sys.stdout.write('\n')
