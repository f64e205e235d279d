-- dpbandit schema, version 2: the probability with which the served policy
-- chose each decision's arm, when the caller asked for it (NULL otherwise),
-- and the Monte Carlo draws behind it (0: exact). It is post-processing of
-- released state (bandit.Propensities), never of raw reward statistics.
ALTER TABLE decisions ADD COLUMN propensity REAL;
ALTER TABLE decisions ADD COLUMN propensity_draws INTEGER;
