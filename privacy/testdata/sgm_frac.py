#!/usr/bin/env python3
"""Exact Renyi divergences of the Poisson-subsampled Gaussian at real orders,
for privacy/sgm_grid_test.go (testdata/sgm_frac.jsonl).

Each output line is [q, sigma, alpha, eps] with eps the exact
eps(alpha) = ln A_alpha / (alpha - 1) of Mironov, Talwar & Zhang (2019,
arXiv 1908.10530, Sec. 3) for the float64 inputs (q, sigma, alpha), printed to
25 significant digits. A_alpha - 1 is computed by mpmath quadrature at 50
digits, independently of the library's series (no binomial series, no CRVZ,
no Mills ratios):

    A_alpha - 1 = E_{z ~ N(0, sigma^2)}[(1 + u)^alpha - 1 - alpha*u],
    u = q * expm1((2z - 1) / (2 sigma^2)),

where the alpha*u term has mean 0 (E[e^{(2z-1)/(2 sigma^2)}] = 1) and is
subtracted so that the integrand is >= 0 (convexity of (1+u)^alpha) and
nothing cancels when A_alpha - 1 is tiny. The integral is split where the
integrand changes shape: +-10 sigma, 0, 1/2, alpha/2, alpha, alpha + 10 sigma,
2 alpha + 20 sigma and z0 = sigma^2 ln(1/q - 1) + 1/2.

    python3 privacy/testdata/sgm_frac.py Q1,Q2 S1,S2 A1,A2 >> out.jsonl

takes the grid's q, sigma and alpha values as comma-separated lists. The
committed file is the two grids in privacy/sgm_grid_test.go's comment.
Requires mpmath (tested with 1.3.0); about 2 to 20 CPU-seconds per point.
"""
import itertools
import json
import sys

import mpmath as mp

mp.mp.dps = 50


def a_minus_1(q, sigma, alpha):
    q, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)

    def f(z):
        u = q * mp.expm1((2*z - 1) / (2*s*s))
        return mp.npdf(z, 0, s) * (mp.expm1(a*mp.log1p(u)) - a*u)

    z0 = s*s*mp.log(1/q - 1) + mp.mpf(1)/2
    pts = [-mp.inf, -10*s, -s, 0, mp.mpf(1)/2, a/2, a, s, a + 10*s, 2*a + 20*s, z0, mp.inf]
    return mp.quad(f, sorted(set(pts)), maxdegree=10)


def main():
    qs, ss, als = ([float(x) for x in arg.split(',')] for arg in sys.argv[1:4])
    for q, s, a in itertools.product(qs, ss, als):
        eps = mp.log1p(a_minus_1(q, s, a)) / (mp.mpf(a) - 1)
        print(json.dumps([q, s, a, mp.nstr(eps, 25)]), flush=True)


if __name__ == '__main__':
    main()
