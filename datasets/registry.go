package datasets

import "fmt"

// raw is the URL of path in a GitHub repository at a fixed commit.
func raw(repo, commit, path string) string {
	return "https://raw.githubusercontent.com/" + repo + "/" + commit + "/" + path
}

const (
	obdRepo, obdCommit           = "st-tech/zr-obp", "8cbd5fa4558b7ad2ba4781546d6604e4cc3e07c4"
	mushroomRepo, mushroomCommit = "michalurb8/MushroomsML", "d71bf742fc17453b3cd83f06eb5ca8059c4bdadc"
	namesRepo, namesCommit       = "jhelm98/mushroom-classification", "1bab32b4c1a548100dc99789e232de3d72dcea82"
	shuttleRepo, shuttleCommit   = "abhijeetborole/multilayerperceptron", "5c12dba6d2537d84d257d246469bf251c3eaef21"
	jesterRepo, jesterCommit     = "negi-soumya/eigentaste", "0877aa8b2b16531cc806a77bae606ad2b8ee5122"
)

const movielensTerms = "GroupLens usage licence: research use only; no redistribution without separate permission; " +
	"no commercial use without permission; no implied endorsement; acknowledge the data in publications"

const movielensCitation = "F. Maxwell Harper and Joseph A. Konstan. 2015. The MovieLens Datasets: History and Context. " +
	"ACM Transactions on Interactive Intelligent Systems (TiiS) 5, 4, Article 19. doi:10.1145/2827872"

// obdFiles are the OBD sample's files: {random,bts}/{men,women}/{men,women}.csv
// and item_context.csv. The checksums were measured on the project's copy
// (byte-for-byte from zr-obp at obdCommit).
var obdFiles = []File{
	{Path: "random/men/men.csv", Size: 3336811, SHA256: "ede6d08c6877f99cd3770f7d09e26c738e6aa6de4445ccccfb1356ba5d06b1eb", About: "uniform-random policy, men's campaign: 10,000 impressions, 34 items"},
	{Path: "random/men/item_context.csv", Size: 4287, SHA256: "6d855c2b7e917d0448d71bbe62c023147495882c0fdc8c41e86fef86abf9fe09", About: "item features, men's campaign"},
	{Path: "random/women/women.csv", Size: 3817771, SHA256: "e65f3bd3beb17664fa69cc129bf7bf852a775f8ffa630506e505fc905315bb34", About: "uniform-random policy, women's campaign: 10,000 impressions, 46 items"},
	{Path: "random/women/item_context.csv", Size: 5792, SHA256: "b1ca4905f97703d196004f2ad4552c1e90c2afad8b50688d333b0d2dc0b33147", About: "item features, women's campaign"},
	{Path: "bts/men/men.csv", Size: 3240432, SHA256: "db6d1f7ed2d591ba521533e45286d4c1fba7fe57a8ad2e80342210335f43c527", About: "Bernoulli Thompson Sampling policy, men's campaign: 10,000 impressions"},
	{Path: "bts/men/item_context.csv", Size: 4287, SHA256: "3b411ed6b0471316321a6b93f4f756bb25888eac6218cd71d0b603d41d85732d", About: "item features, men's campaign"},
	{Path: "bts/women/women.csv", Size: 3722697, SHA256: "e5d1b49a39b608585a2f3014a3f54970430cd37a495c1b73fceb85cdf428a5b8", About: "Bernoulli Thompson Sampling policy, women's campaign: 10,000 impressions"},
	{Path: "bts/women/item_context.csv", Size: 5792, SHA256: "a56295bad066a558eb783055afd9279f5f4e209a4776eafc22151c53f0ac89d4", About: "item features, women's campaign"},
}

// plainDownloads is one Plain download per file, from repo at commit under
// prefix (the file's path in the repository is prefix + File.Path).
func plainDownloads(repo, commit, prefix string, files []File) []Download {
	var out []Download
	for _, f := range files {
		out = append(out, Download{URL: raw(repo, commit, prefix+f.Path), Size: f.Size, SHA256: f.SHA256, Packaging: Plain, To: f.Path})
	}
	return out
}

// jesterJokes are jokes/init1.html … jokes/init100.html, in numeric order.
func jesterJokes() []string {
	p := make([]string, 100)
	for i := range p {
		p[i] = fmt.Sprintf("jokes/init%d.html", i+1)
	}
	return p
}

// yahooR6A are the ten daily files of Webscope R6A, as distributed.
func yahooR6A() []File {
	var f []File
	for day := 1; day <= 10; day++ {
		f = append(f, File{Path: fmt.Sprintf("ydata-fp-td-clicks-v1_0.200905%02d.gz", day),
			About: fmt.Sprintf("click log of 2009-05-%02d (no checksum recorded: checked for presence only)", day)})
	}
	return f
}

var registry = []Dataset{
	{
		Name:  "open-bandit-dataset-sample",
		Title: "Open Bandit Dataset (ZOZOTOWN), small sample",
		About: "Logged bandit feedback from the fashion e-commerce site ZOZOTOWN, 2019-11-24 to 2019-11-30: " +
			"impressions served by a uniform-random and by a Bernoulli Thompson Sampling policy, with clicks and " +
			"propensities. Read by --env obd, dpbandit evaluate, and the E11 replay (mt2015-replay).",
		Records: "4 files × 10,000 impressions; 34 items (men), 46 items (women)",
		Terms:   "Apache-2.0",
		License: "Apache-2.0 (the zr-obp repository that ships the sample); the full OBD is CC BY 4.0 per its authors",
		Citation: "Yuta Saito, Shunsuke Aihara, Megumi Matsutani, Yusuke Narita. Open Bandit Dataset and Pipeline: " +
			"Towards Realistic and Reproducible Off-Policy Evaluation. NeurIPS 2021 Datasets and Benchmarks (arXiv:2008.07146)",
		Homepage: "https://github.com/st-tech/zr-obp (full data set: https://research.zozo.com/data.html)",
		Provenance: "st-tech/zr-obp at commit " + obdCommit + ", obd/{random,bts}/{men,women}/; " +
			"the checksums were measured on a byte-for-byte copy",
		Files:     obdFiles,
		Downloads: plainDownloads(obdRepo, obdCommit, "obd/", obdFiles),
	},
	{
		Name:  "uci-mushroom",
		Title: "UCI Mushroom (agaricus-lepiota)",
		About: "8,124 mushrooms described by 22 nominal attributes, labelled edible or poisonous: the mushroom bandit " +
			"of Riquelme et al., Deep Bayesian Bandits Showdown (ICLR 2018). Read by --env mushroom.",
		Records:  "8,124 rows × 23 one-letter columns, after a synthetic header line 0,1,…,m added by the host copy",
		Terms:    "CC BY 4.0",
		License:  "CC BY 4.0 (UCI Machine Learning Repository, data set 73); the host copy of the data file is MIT-licensed",
		Citation: "J. Schlimmer. 1987. Mushroom. UCI Machine Learning Repository",
		Homepage: "https://archive.ics.uci.edu/dataset/73/mushroom",
		Provenance: mushroomRepo + " at commit " + mushroomCommit + " (agaricus-lepiota.data); " +
			namesRepo + " at commit " + namesCommit + " (agaricus-lepiota.names, the UCI description); " +
			"the checksums were measured on byte-for-byte copies",
		Files: []File{
			{Path: "agaricus-lepiota.data", Size: 373750, SHA256: "799d068978c62941cd323c16e82ec28d588f1c264c42f90ce56cc73358b3efdb", About: "the data: class, then 22 attributes"},
			{Path: "agaricus-lepiota.names", Size: 6887, SHA256: "90083040d5bc11acc6c8c094216aa351caa6948df2518b0244ca35eb91af6f9a", About: "UCI's description of the attributes"},
		},
		Downloads: []Download{
			{URL: raw(mushroomRepo, mushroomCommit, "agaricus-lepiota.data"), Size: 373750, SHA256: "799d068978c62941cd323c16e82ec28d588f1c264c42f90ce56cc73358b3efdb", Packaging: Plain, To: "agaricus-lepiota.data"},
			{URL: raw(namesRepo, namesCommit, "agaricus-lepiota.names"), Size: 6887, SHA256: "90083040d5bc11acc6c8c094216aa351caa6948df2518b0244ca35eb91af6f9a", Packaging: Plain, To: "agaricus-lepiota.names"},
		},
	},
	{
		Name:  "uci-statlog-shuttle",
		Title: "UCI Statlog (Shuttle), training split",
		About: "Space-shuttle radiator sensor readings: 9 numeric features and one of 7 classes; a 7-armed " +
			"classification bandit as in Riquelme et al. (ICLR 2018). Read by --env shuttle.",
		Records:  "43,500 rows × 10 integer columns (class counts 34,108 / 37 / 132 / 6,748 / 2,458 / 6 / 11)",
		Terms:    "CC BY 4.0",
		License:  "CC BY 4.0 (UCI Machine Learning Repository, data set 148); the host repository has no licence file",
		Citation: "Statlog (Shuttle). UCI Machine Learning Repository, data set 148",
		Homepage: "https://archive.ics.uci.edu/dataset/148/statlog+shuttle",
		Provenance: shuttleRepo + " at commit " + shuttleCommit + ", shuttle.trn (a comma-separated copy of UCI's " +
			"space-separated shuttle.trn), saved as shuttle.trn.csv; the checksum was measured on a byte-for-byte copy",
		Files: []File{
			{Path: "shuttle.trn.csv", Size: 1153517, SHA256: "a0128290c86442a40ec7506003e51808afbef2f509d80a9ff244ecd5bc6dfa36", About: "the training split, comma-separated, no final newline"},
		},
		Downloads: []Download{
			{URL: raw(shuttleRepo, shuttleCommit, "shuttle.trn"), Size: 1153517, SHA256: "a0128290c86442a40ec7506003e51808afbef2f509d80a9ff244ecd5bc6dfa36", Packaging: Plain, To: "shuttle.trn.csv"},
		},
	},
	{
		Name:  "movielens-100k",
		Title: "MovieLens 100K (GroupLens ml-100k)",
		About: "Movie ratings from 1 to 5 stars collected by MovieLens, 1997-09 to 1998-04: the semi-synthetic " +
			"recommendation bandit of the AdaPrivate-TS experiments (E13).",
		Records:  "100,000 ratings by 943 users of 1,682 movies; every user rated at least 20",
		Terms:    "GroupLens terms, no redistribution",
		License:  movielensTerms,
		Citation: movielensCitation,
		Homepage: "https://grouplens.org/datasets/movielens/100k/",
		Provenance: "the files of GroupLens's ml-100k/ folder; the checksums were measured on the project's copy " +
			"(the split files u1..u5, ua, ub and the scripts are not needed)",
		Files: []File{
			{Path: "u.data", Size: 1979173, SHA256: "06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490", About: "the ratings: user, item, rating, timestamp (tab-separated)"},
			{Path: "u.item", Size: 236344, SHA256: "553841ebc7de3a0fd0d6b62a204ea30c1e651aacfb2814c7a6584ac52f2c5701", About: "the movies (ISO-8859-1)"},
			{Path: "u.user", Size: 22628, SHA256: "f120e114da2e8cf314fd28f99417c94ae9ddf1cb6db8ce0e4b5995d40e90e62c", About: "the users"},
			{Path: "u.info", Size: 36, SHA256: "5b0a40b2e47a729ee6203063f6dcf8790c2e63f5a18663e6ee318a72c5f3c27b", About: "the counts"},
			{Path: "u.genre", Size: 202, SHA256: "9757e0d3e6b298159a80dd48eaf938114690e911e39af97a76949ef1663610bb", About: "the genres"},
			{Path: "u.occupation", Size: 193, SHA256: "cd5fbec9afe345d993a62fc7817df1a4a9079c4feb267b3118763b8fd942137d", About: "the occupations"},
			{Path: "README", Size: 6750, SHA256: "4883b8cf340ed0059971b33f56ad3adc88a40792108ebca3d24aafc4c82e8b52", About: "GroupLens's README, with the terms"},
		},
		Obtain: "Read the terms at https://grouplens.org/datasets/movielens/100k/, download " +
			"https://files.grouplens.org/datasets/movielens/ml-100k.zip and unzip it: its ml-100k/ folder holds the files below.",
	},
	{
		Name:  "movielens-1m",
		Title: "MovieLens 1M (GroupLens ml-1m)",
		About: "Movie ratings from 1 to 5 stars by MovieLens users who joined in 2000: the larger MovieLens bandit " +
			"of the AdaPrivate-TS experiments.",
		Records:  "1,000,209 ratings by 6,040 users of 3,706 movies (the stand-in: 487,650 ratings by users 1..2999)",
		Terms:    "GroupLens terms, no redistribution",
		License:  movielensTerms,
		Citation: movielensCitation,
		Homepage: "https://grouplens.org/datasets/movielens/1m/",
		Provenance: "the files of GroupLens's ml-1m/ folder; movies.dat, users.dat and README checksums measured on " +
			"the project's copy; ratings.dat is identified by its git blob id, which four independent repositories agree on",
		Files: []File{
			{Path: "ratings.dat", GitBlob: "77a7c4b150f588c23bb9e1f068aa996c0b413695", StandIn: "ratings_PARTIAL_users1-2999.dat.gz",
				About: "the ratings: UserID::MovieID::Rating::Timestamp (about 24.6 MB)"},
			{Path: "movies.dat", Size: 171308, SHA256: "0140fc2356357c1a851d0f52e893a1e4d3696df632c4141cea8d5bc3d621f0b9", About: "the movies (ISO-8859-1)"},
			{Path: "users.dat", Size: 134368, SHA256: "1dc3a95300cb19f7c10e027daf29b8cdf1d908dab65b5edfb45950aa389a10a3", About: "the users"},
			{Path: "README", Size: 5577, SHA256: "2d5ddce86ccbd247207456165827b4b9ddf27282bca93807d4c763e28414f133", About: "GroupLens's README, with the terms"},
			{Path: "ratings_PARTIAL_users1-2999.dat.gz", Size: 2882903, SHA256: "2fedcf5405373a49df4041e3d3fe1e8db9eacf2c77c209ae1f686ea06b7a16d9", Optional: true,
				About: "partial stand-in for ratings.dat: the ratings of users 1..2999 only (gzip; decompressed SHA-256 1273c4edfe3c0ff9e3a0a0d55819faeb947da0ad7df3927333b51ebefbeedc3d)"},
		},
		Obtain: "Read the terms at https://grouplens.org/datasets/movielens/1m/, download " +
			"https://files.grouplens.org/datasets/movielens/ml-1m.zip and unzip it: its ml-1m/ folder holds the files below " +
			"(ratings_PARTIAL_users1-2999.dat.gz is not needed once ratings.dat is there).",
		Note: "The project's own copy is PARTIAL: it lacks ratings.dat and holds ratings_PARTIAL_users1-2999.dat.gz, the " +
			"ratings of users 1..2999 only (487,650 of 1,000,209). Results on it are not MovieLens-1M results: label them " +
			"\"ML-1M users 1-2999\".",
	},
	{
		Name:  "jester",
		Title: "Jester joke ratings, Dataset 1, file 1 of 3 (jester-data-1)",
		About: "Continuous ratings from -10 to +10 of 100 jokes, collected April 1999 to May 2003: the Jester " +
			"bandit of the AdaPrivate-TS experiments (E13). Only file 1 of Dataset 1's three files.",
		Records:  "24,983 users (each rated 36 or more jokes) × 100 jokes; 1,810,455 ratings; 99 marks \"not rated\"",
		Terms:    "research use, cite Eigentaste",
		License:  "free for research use when acknowledged with the Eigentaste reference (the Jester terms)",
		Citation: "Ken Goldberg, Theresa Roeder, Dhruv Gupta, Chris Perkins. 2001. Eigentaste: A Constant Time Collaborative Filtering Algorithm. Information Retrieval 4(2), 133-151",
		Homepage: "https://eigentaste.berkeley.edu/dataset/",
		Provenance: jesterRepo + " at commit " + jesterCommit + ", jester-data-1.zip: a CSV export of the official " +
			"jester-data-1.xls (the repository has no licence file); the joke texts are the official jokes/ folder",
		Files: []File{
			{Path: "jester-data-1.csv", Size: 11712553, SHA256: "4692895acc91263ec11592cb94687725e28afdd451845ab46c2ac6ba3ebc414e",
				About: "one user per line: the number of jokes rated, then the ratings of jokes 1..100 (99: not rated)"},
			{Path: "jokes/init{1..100}.html", Parts: jesterJokes(), Size: 66192, SHA256: "f10cb12c841949b84605d5467e991531e6dbebb50943546e7094c0c8c3fe0a8a", Optional: true,
				About: "the joke texts (checksum of the 100 files concatenated in numeric order); not read by dpbandit and not fetched"},
		},
		Downloads: []Download{
			{URL: raw(jesterRepo, jesterCommit, "jester-data-1.zip"), Size: 3400621, SHA256: "4adf783a1e03bd3be063315cb6e0a064fe63e983fd289d01b8e401a8e6c41e5f",
				Packaging: Zip, Members: map[string]string{"jester-data-1.csv": "jester-data-1.csv"}},
		},
	},
	{
		Name:  "yahoo-r6",
		Title: "Yahoo! Front Page Today Module User Click Log (Webscope R6A)",
		About: "Ten days (2009-05-01 to 2009-05-10) of visits to the Yahoo! front page's Today Module, each showing " +
			"one article chosen uniformly at random, with the click and user and article features: the replay data " +
			"of Li et al. and of Mishra & Thakurta (UAI 2015), E11. Not held by the project: E11 runs on the Open " +
			"Bandit Dataset's uniform logs as a stand-in (docs/reproduction-decisions.md).",
		Records: "about 46 million logged visits",
		Terms:   "Webscope agreement, no redistribution",
		License: "Yahoo! Webscope data-sharing agreement: approved non-commercial research only; no redistribution",
		Citation: "Lihong Li, Wei Chu, John Langford, Robert E. Schapire. A Contextual-Bandit Approach to Personalized News " +
			"Article Recommendation. WWW 2010; Lihong Li, Wei Chu, John Langford, Xuanhui Wang. Unbiased Offline Evaluation " +
			"of Contextual-Bandit-based News Article Recommendation Algorithms. WSDM 2011",
		Homepage:   "https://webscope.sandbox.yahoo.com/catalog.php?datatype=r (R6A, ydata-fp-td-clicks-v1_0)",
		Provenance: "Yahoo! Webscope only; no checksums are recorded, so a copy is checked for presence only",
		Files:      yahooR6A(),
		Obtain: "Apply for data set R6A (\"Yahoo! Front Page Today Module User Click Log Dataset, version 1.0\") at " +
			"https://webscope.sandbox.yahoo.com/catalog.php?datatype=r and sign Yahoo!'s data-sharing agreement; " +
			"then place the ten daily files, gzip-compressed as distributed, at the paths below.",
	},
}
