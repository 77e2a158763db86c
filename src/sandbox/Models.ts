/**
 * Vehicle models the sandbox draws its synthetic vehicles from, written as the national registry
 * writes them. Most entries name one catalog version exactly (family and every token of the
 * version); a few name only the family and part of the version, so that lookups also meet
 * vehicles that match several versions. `popularity` weights how often a model is drawn.
 */
import type { VehicleCategory } from "../catalog/Records.js"

export interface SandboxModel {
  /** As a national registry writes the make (upper case, sometimes abbreviated). */
  readonly make: string
  /** Registry-style model text, e.g. "GOL TREND 1.6 TRENDLINE 5P". */
  readonly model: string
  /** First and last model year sold. */
  readonly years: readonly [number, number]
  readonly category: Exclude<VehicleCategory, "unknown">
  readonly vehicleType: string
  /** Relative popularity, 1 (rare) to 10 (very common). */
  readonly popularity: number
}

export const SANDBOX_MODELS: ReadonlyArray<SandboxModel> = [
  // Autos
  { make: "VOLKSWAGEN", model: "GOL TREND 1.6 TRENDLINE 5P", years: [2017, 2023], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 10 },
  { make: "VW", model: "GOL TREND 1.6 POWER", years: [2009, 2016], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "VOLKSWAGEN", model: "POLO 1.6 MSI TRENDLINE 5P", years: [2018, 2023], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 7 },
  { make: "VOLKSWAGEN", model: "VIRTUS 1.6 MSI TRENDLINE 4P", years: [2018, 2025], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 6 },
  { make: "CHEVROLET", model: "ONIX 1.4 LT 5P", years: [2013, 2019], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 9 },
  { make: "CHEVROLET", model: "ONIX 1.0 TURBO LT", years: [2020, 2025], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "CHEVROLET", model: "PRISMA 1.4 LT 4P", years: [2013, 2019], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 7 },
  { make: "CHEVROLET", model: "CRUZE 1.4 TURBO LTZ AT 4P", years: [2017, 2025], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 6 },
  { make: "FIAT", model: "CRONOS DRIVE 1.3 GSE 4P", years: [2018, 2025], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 10 },
  { make: "FIAT", model: "CRONOS LIKE 1.3 GSE", years: [2021, 2025], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 8 },
  { make: "FIAT", model: "ARGO DRIVE 1.3 GSE 5P", years: [2018, 2024], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 7 },
  { make: "FIAT", model: "PALIO 1.4 ATTRACTIVE 5P", years: [2012, 2017], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 7 },
  { make: "FIAT", model: "SIENA 1.4 EL 4P", years: [2008, 2017], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 7 },
  { make: "TOYOTA", model: "ETIOS 1.5 XS 5P", years: [2013, 2023], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 9 },
  { make: "TOYOTA", model: "ETIOS 1.5 X", years: [2013, 2023], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "TOYOTA", model: "COROLLA 1.8 XEI CVT 4P", years: [2015, 2019], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 8 },
  { make: "TOYOTA", model: "COROLLA 2.0 XEI CVT", years: [2020, 2025], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 7 },
  { make: "TOYOTA", model: "YARIS 1.5 XS 5P", years: [2018, 2025], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 6 },
  { make: "PEUGEOT", model: "208 1.6 ALLURE 5P", years: [2013, 2020], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 9 },
  { make: "PEUGEOT", model: "208 1.6 ACTIVE", years: [2013, 2020], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "RENAULT", model: "SANDERO 1.6 ZEN 5P", years: [2020, 2024], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "RENAULT", model: "SANDERO 1.6 LIFE", years: [2020, 2023], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 7 },
  { make: "RENAULT", model: "LOGAN 1.6 ZEN 4P", years: [2020, 2023], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 7 },
  { make: "RENAULT", model: "CLIO 1.2 PACK 5P", years: [2004, 2012], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 6 },
  { make: "FORD", model: "KA 1.5 SE 5P", years: [2017, 2021], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "FORD", model: "KA 1.5 S", years: [2017, 2021], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 7 },
  { make: "FORD", model: "FIESTA 1.6 SE 5P", years: [2011, 2019], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 7 },
  { make: "FORD", model: "FOCUS 2.0 SE 5P", years: [2013, 2019], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 6 },
  { make: "CITROEN", model: "C3 1.6 VTI TENDANCE 5P", years: [2013, 2017], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 6 },
  { make: "NISSAN", model: "VERSA 1.6 SENSE 4P", years: [2020, 2025], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 6 },
  // Camionetas (pick-ups and SUVs)
  { make: "TOYOTA", model: "HILUX 2.8 TDI SRV 4X4 AT", years: [2016, 2025], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 10 },
  { make: "TOYOTA", model: "HILUX 2.4 TDI DX 4X2", years: [2016, 2025], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 8 },
  { make: "TOYOTA", model: "SW4 2.8 TDI SRX 4X4 AT", years: [2016, 2025], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 7 },
  { make: "FORD", model: "RANGER 3.2 TDCI XLT 4X4 AT", years: [2013, 2022], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 9 },
  { make: "FORD", model: "RANGER 2.2 TDCI XL 4X2", years: [2013, 2022], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 8 },
  { make: "FORD", model: "ECOSPORT 1.6 SE", years: [2013, 2017], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 8 },
  { make: "FORD", model: "ECOSPORT 1.6 S", years: [2013, 2017], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 6 },
  { make: "FORD", model: "TERRITORY 1.5 TURBO SEL", years: [2021, 2025], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 5 },
  { make: "VOLKSWAGEN", model: "AMAROK 2.0 TDI HIGHLINE 4X4 AT", years: [2011, 2021], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 8 },
  { make: "VW", model: "AMAROK 2.0 TDI TRENDLINE 4X2", years: [2010, 2021], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 7 },
  { make: "VOLKSWAGEN", model: "TAOS 1.4 TSI COMFORTLINE AT", years: [2021, 2025], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 5 },
  { make: "VOLKSWAGEN", model: "T-CROSS 1.6 MSI TRENDLINE", years: [2020, 2024], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 6 },
  { make: "CHEVROLET", model: "S10 2.8 CTDI LT 4X4", years: [2017, 2025], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 7 },
  { make: "CHEVROLET", model: "S10 2.8 CTDI HIGH COUNTRY 4X4 AT", years: [2017, 2025], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 7 },
  { make: "CHEVROLET", model: "TRACKER 1.2 TURBO LTZ AT", years: [2021, 2025], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 7 },
  { make: "RENAULT", model: "DUSTER 1.6 DYNAMIQUE 4X2", years: [2011, 2020], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 7 },
  { make: "RENAULT", model: "OROCH 1.6 DYNAMIQUE", years: [2016, 2021], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 5 },
  { make: "PEUGEOT", model: "2008 1.6 ALLURE", years: [2016, 2023], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 7 },
  { make: "JEEP", model: "RENEGADE 1.8 SPORT", years: [2016, 2022], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 6 },
  { make: "JEEP", model: "COMPASS 2.4 LONGITUDE AT", years: [2017, 2021], category: "camioneta", vehicleType: "SUV 5 puertas", popularity: 6 },
  { make: "NISSAN", model: "FRONTIER 2.3 DCI XE 4X4", years: [2018, 2025], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 6 },
  { make: "FIAT", model: "TORO 2.0 TD VOLCANO 4X4 AT", years: [2016, 2025], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 8 },
  { make: "FIAT", model: "TORO 2.0 TD FREEDOM 4X4", years: [2016, 2021], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 6 },
  // Utilitarios
  { make: "RENAULT", model: "KANGOO 1.6 CONFORT", years: [2008, 2018], category: "utilitario", vehicleType: "Furgón mixto", popularity: 9 },
  { make: "RENAULT", model: "KANGOO 1.6 AUTHENTIQUE", years: [2008, 2018], category: "utilitario", vehicleType: "Furgón", popularity: 8 },
  { make: "FIAT", model: "FIORINO 1.4 FIRE EVO", years: [2014, 2021], category: "utilitario", vehicleType: "Furgón", popularity: 8 },
  { make: "FIAT", model: "FIORINO 1.3 FIRE", years: [2005, 2013], category: "utilitario", vehicleType: "Furgón", popularity: 6 },
  { make: "PEUGEOT", model: "PARTNER 1.6 HDI CONFORT", years: [2009, 2019], category: "utilitario", vehicleType: "Furgón", popularity: 7 },
  { make: "CITROEN", model: "BERLINGO 1.6 HDI BUSINESS", years: [2010, 2019], category: "utilitario", vehicleType: "Furgón", popularity: 7 },
  { make: "MERCEDES BENZ", model: "SPRINTER 415 CDI FURGON 3665 TN", years: [2013, 2025], category: "utilitario", vehicleType: "Furgón", popularity: 7 },
  { make: "RENAULT", model: "MASTER 2.3 DCI L2H2", years: [2014, 2025], category: "utilitario", vehicleType: "Furgón", popularity: 6 },
  // Camiones
  { make: "MERCEDES BENZ", model: "ACCELO 815/37", years: [2008, 2021], category: "camion", vehicleType: "Camión chasis cabina", popularity: 6 },
  { make: "MERCEDES BENZ", model: "ATEGO 1726/42", years: [2010, 2025], category: "camion", vehicleType: "Camión chasis cabina", popularity: 5 },
  { make: "IVECO", model: "TECTOR 170E28", years: [2012, 2025], category: "camion", vehicleType: "Camión chasis cabina", popularity: 5 },
  { make: "IVECO", model: "DAILY 55C17 CHASIS", years: [2012, 2025], category: "camion", vehicleType: "Camión chasis cabina", popularity: 6 },
  { make: "FORD", model: "CARGO 816", years: [2012, 2019], category: "camion", vehicleType: "Camión chasis cabina", popularity: 5 },
  { make: "VOLKSWAGEN", model: "DELIVERY 9.170", years: [2018, 2025], category: "camion", vehicleType: "Camión chasis cabina", popularity: 5 },
  // Motos
  { make: "HONDA", model: "WAVE 110 S FULL", years: [2012, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 10 },
  { make: "HONDA", model: "WAVE 110 S BASE", years: [2012, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 9 },
  { make: "HONDA", model: "CG TITAN 150 ESD", years: [2009, 2019], category: "moto", vehicleType: "Motocicleta", popularity: 9 },
  { make: "HONDA", model: "CG TITAN 150 KS", years: [2004, 2015], category: "moto", vehicleType: "Motocicleta", popularity: 7 },
  { make: "HONDA", model: "XR 150 L", years: [2015, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 7 },
  { make: "YAMAHA", model: "YBR 125 FULL", years: [2008, 2016], category: "moto", vehicleType: "Motocicleta", popularity: 7 },
  { make: "MOTOMEL", model: "BLITZ 110 V8 BASE", years: [2012, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 9 },
  { make: "MOTOMEL", model: "BLITZ 110 V8 FULL", years: [2012, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 8 },
  { make: "GILERA", model: "SMASH 110 FULL", years: [2010, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 8 },
  { make: "GILERA", model: "SMASH 110 VS", years: [2010, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 7 },
  { make: "CORVEN", model: "ENERGY 110 FULL", years: [2011, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 7 },
  { make: "BAJAJ", model: "ROUSER NS 200", years: [2013, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 6 },
  // Others (cuatriciclos)
  { make: "HONDA", model: "TRX 420 FM", years: [2015, 2025], category: "otro", vehicleType: "Cuatriciclo", popularity: 4 },
  { make: "POLARIS", model: "SPORTSMAN 450 HO", years: [2016, 2025], category: "otro", vehicleType: "Cuatriciclo", popularity: 3 },
  // Family and part of the version only: several catalog versions are candidates
  { make: "VOLKSWAGEN", model: "GOL TREND 1.6", years: [2017, 2023], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 9 },
  { make: "TOYOTA", model: "HILUX 2.8 TDI 4X4 AT", years: [2019, 2025], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 9 },
  { make: "FIAT", model: "CRONOS 1.3 GSE", years: [2021, 2025], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 9 },
  { make: "CHEVROLET", model: "ONIX 1.4", years: [2013, 2019], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "FORD", model: "RANGER 2.2 TDCI 4X2", years: [2013, 2022], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 7 },
  { make: "TOYOTA", model: "ETIOS 1.5", years: [2013, 2023], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "PEUGEOT", model: "208 1.6", years: [2013, 2020], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 8 },
  { make: "VOLKSWAGEN", model: "AMAROK 2.0 TDI", years: [2011, 2021], category: "camioneta", vehicleType: "Pick-up doble cabina", popularity: 7 },
  { make: "RENAULT", model: "KANGOO CONFORT", years: [2008, 2018], category: "utilitario", vehicleType: "Furgón mixto", popularity: 8 },
  { make: "HONDA", model: "WAVE 110 S", years: [2012, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 9 },
  { make: "HONDA", model: "CG TITAN 150", years: [2009, 2015], category: "moto", vehicleType: "Motocicleta", popularity: 8 },
  { make: "MOTOMEL", model: "BLITZ 110 V8", years: [2012, 2025], category: "moto", vehicleType: "Motocicleta", popularity: 8 },
  { make: "MERCEDES BENZ", model: "ACCELO 1016", years: [2014, 2025], category: "camion", vehicleType: "Camión chasis cabina", popularity: 5 },
  { make: "TOYOTA", model: "COROLLA 1.8 CVT", years: [2015, 2019], category: "auto", vehicleType: "Sedán 4 puertas", popularity: 7 },
  { make: "RENAULT", model: "SANDERO 1.6", years: [2020, 2023], category: "auto", vehicleType: "Hatchback 5 puertas", popularity: 7 }
]
